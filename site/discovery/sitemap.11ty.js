// /sitemap.xml: every page of this build plus the free endpoints and discovery files, with last modification.
export const data = { permalink: '/sitemap.xml', eleventyExcludeFromCollections: true };
export default function render({ collections }) {
  return this.sitemapXml(collections.all);
}
