// Reading the published site through one function: a folder on Node (published-fs.ts), an assets binding at the
// edge.

/**
 * The text of a published file (a path relative to the site root), or null when it is absent. A file that is
 * there but cannot be read (no permission, a folder in its place) throws: it is not "not published".
 */
export type ReadText = (file: string) => Promise<string | null>;

/** A published file as read: absent, present but unreadable (why), or its parsed JSON. */
export type PublishedFile =
  { state: 'absent' } | { state: 'unreadable'; reason: string } | { state: 'json'; value: unknown };

export type ReadPublished = (file: string) => Promise<PublishedFile>;

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export const jsonReader =
  (readText: ReadText): ReadPublished =>
  async (file) => {
    let text: string | null;
    try {
      text = await readText(file);
    } catch (error) {
      return { state: 'unreadable', reason: `cannot be read (${reasonOf(error)})` };
    }
    if (text === null) return { state: 'absent' };
    try {
      return { state: 'json', value: JSON.parse(text) as unknown };
    } catch (error) {
      return { state: 'unreadable', reason: `is not valid JSON (${reasonOf(error)})` };
    }
  };

/** The parsed JSON, or null when the file is absent or unreadable (for callers that report both alike). */
export const jsonOrNull = (file: PublishedFile): unknown => (file.state === 'json' ? file.value : null);
