// Reading the published site through one function: a folder on Node (published-fs.ts), an assets binding at the
// edge.

/** The text of a published file (a path relative to the site root), or null when it is absent. */
export type ReadText = (file: string) => Promise<string | null>;
/** The parsed JSON of a published file, or null when it is absent or not JSON. */
export type ReadPublished = (file: string) => Promise<unknown>;

export const jsonReader =
  (readText: ReadText): ReadPublished =>
  async (file) => {
    const text = await readText(file);
    if (text === null) return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  };
