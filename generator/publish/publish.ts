// What a run publishes, checked before anything is written: every body must pass its schema, or nothing is
// published (the generation folders, publish/generations.ts, then switch all files at once).
import { join } from 'node:path';
import type * as z from 'zod';

export interface PublishItem {
  /** Folder the file belongs to (the public site root or the private paid root). */
  root: string;
  /** Path relative to `root`. */
  file: string;
  schema: z.ZodType;
  body: unknown;
}

export class PublishValidationError extends Error {
  constructor(readonly failures: Array<{ file: string; problems: string[] }>) {
    super(
      `refusing to publish: ${failures.length} file(s) failed their schema: ` +
        failures.map((f) => `${f.file} (${f.problems[0] ?? 'invalid'})`).join('; '),
    );
    this.name = 'PublishValidationError';
  }
}

/** Serialises the way every published file is written: two-space JSON with a trailing newline. */
export const serialise = (body: unknown): string => `${JSON.stringify(body, null, 2)}\n`;

export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** Validates every item; throws PublishValidationError naming each failing file, else returns what to write. */
export function serialiseAll(items: readonly PublishItem[]): Array<{ target: string; data: string }> {
  const failures: Array<{ file: string; problems: string[] }> = [];
  const serialised = items.map((item) => {
    const parsed = item.schema.safeParse(item.body);
    if (!parsed.success) failures.push({ file: item.file, problems: describeIssues(parsed.error) });
    // What is written is what the schema returned, so nothing the schema did not describe can slip through.
    return { target: join(item.root, item.file), data: serialise(parsed.data) };
  });
  if (failures.length > 0) throw new PublishValidationError(failures);
  return serialised;
}
