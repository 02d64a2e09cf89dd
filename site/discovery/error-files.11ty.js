// /errors/<name>.json: the JSON error bodies that static hosts without a programmable server answer with.
export const data = {
  pagination: { data: 'discovery.errorFiles', size: 1, alias: 'errorFile' },
  permalink: ({ errorFile }) => `/errors/${errorFile.fileName}`,
  eleventyExcludeFromCollections: true,
};
export default ({ errorFile }) => errorFile.json;
