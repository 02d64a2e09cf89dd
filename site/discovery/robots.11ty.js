// /robots.txt: everything may be crawled; the sitemap lists every public URL.
export const data = { permalink: '/robots.txt', eleventyExcludeFromCollections: true };
export default ({ discovery }) => discovery.robotsTxt;
