// Publishing is all or nothing: every body must pass its schema, every file is staged, and only then are the
// staged files renamed over the last good ones. A failure at any step leaves the previous files untouched.
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type * as z from 'zod';
import { stageFile } from './atomic-write.ts';

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

/** Validates every item, then stages and swaps them in file by file. Returns the absolute paths written. */
export async function publishAll(items: readonly PublishItem[]): Promise<string[]> {
  const serialised = serialiseAll(items);

  const staged: Array<{ temp: string; target: string }> = [];
  try {
    for (const { target, data } of serialised) staged.push({ temp: await stageFile(target, data), target });
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    throw error;
  }
  for (const { temp, target } of staged) await rename(temp, target);
  return staged.map(({ target }) => target);
}
