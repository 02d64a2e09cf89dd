// /robots.txt: everything may be crawled; the sitemap lists every page and every file llms.txt links.
export const data = { permalink: '/robots.txt', eleventyExcludeFromCollections: true };
export default ({ discovery }) => discovery.robotsTxt;
