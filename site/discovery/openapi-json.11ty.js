// /openapi.json: prepared by generator/discovery/openapi.ts, printed as is.
export const data = { permalink: '/openapi.json', eleventyExcludeFromCollections: true };
export default ({ discovery }) => discovery.openapiJson;
