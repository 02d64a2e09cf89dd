// /llms.txt (llmstxt.org format), prepared by generator/discovery/llms-txt.ts.
export const data = { permalink: '/llms.txt', eleventyExcludeFromCollections: true };
export default ({ discovery }) => discovery.llmsTxt;
