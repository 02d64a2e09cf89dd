// Checks a folder of published output against the registry's schemas: what `emi validate` runs.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as z from 'zod';
import { FREE_RESOURCES, PAID_RESOURCES, REASONING_FILES } from '../../schemas/resources.ts';
import { ReasoningResponse } from '../../schemas/reasoning.ts';
import { describeIssues } from './publish.ts';

export interface FileCheck {
  file: string;
  ok: boolean;
  problems: string[];
}

async function checkFile(root: string, file: string, schema: z.ZodType): Promise<FileCheck> {
  let text: string;
  try {
    text = await readFile(join(root, file), 'utf8');
  } catch {
    return { file, ok: false, problems: ['file is missing or unreadable'] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { file, ok: false, problems: [`not JSON: ${(error as Error).message}`] };
  }
  const parsed = schema.safeParse(json);
  return parsed.success
    ? { file, ok: true, problems: [] }
    : { file, ok: false, problems: describeIssues(parsed.error) };
}

export async function validatePublicOutput(siteRoot: string): Promise<FileCheck[]> {
  return Promise.all([
    ...FREE_RESOURCES.map((r) => checkFile(siteRoot, r.file, r.schema)),
    ...REASONING_FILES.map((r) => checkFile(siteRoot, r.file, ReasoningResponse)),
  ]);
}

export async function validatePaidOutput(paidRoot: string): Promise<FileCheck[]> {
  return Promise.all(PAID_RESOURCES.map((r) => checkFile(paidRoot, r.file, r.schema)));
}
