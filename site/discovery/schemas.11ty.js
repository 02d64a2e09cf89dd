// /schemas/<resource>.json: one standalone JSON Schema (draft 2020-12) per resource.
export const data = {
  pagination: { data: 'discovery.schemaFiles', size: 1, alias: 'schemaFile' },
  permalink: ({ schemaFile }) => `/schemas/${schemaFile.fileName}`,
  eleventyExcludeFromCollections: true,
};
export default ({ schemaFile }) => schemaFile.json;
