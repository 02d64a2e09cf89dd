// /openapi.yaml: the same document as /openapi.json.
export const data = { permalink: '/openapi.yaml', eleventyExcludeFromCollections: true };
export default ({ discovery }) => discovery.openapiYaml;
