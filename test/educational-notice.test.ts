// The specification's first rule (section 1): every response is educational only, "not financial, investment,
// trading, tax, legal, betting, gambling or fund-management advice", with "no personalised recommendations and no
// guarantee of future outcomes", and carries a disclaimer or educational-notice field. Checked on every JSON body
// one simulated run publishes, free and paid; and a finished history day written with the earlier, shorter notice
// still passes `emi validate` (a day file is never rewritten once its day is over).
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { publishSimulatedRuns } from './site-fixture.ts';
import { validateHistoryOutput } from '../generator/publish/validate-output.ts';
import { EARLIER_EDUCATIONAL_NOTICES, EDUCATIONAL_NOTICE } from '../schemas/common.ts';
import { jsonFiles } from './helpers/json-files.ts';
import { tempDir } from './helpers/temp-dir.ts';

/** What the spec says every response is not, and does not give. */
const SCOPE = [
  'financial',
  'investment',
  'trading',
  'tax',
  'legal',
  'betting',
  'gambling',
  'fund-management',
  'no personalised recommendation',
  'no guarantee of future outcomes',
];

describe('the educational notice of every published body', () => {
  let root: string;
  beforeAll(async () => {
    root = await tempDir('emi-notice-');
    await publishSimulatedRuns(root, [Date.parse('2026-11-20T12:00:00Z')]);
  }, 60_000);

  it('says the whole scope of the spec in its disclaimer or educational_notice, free and paid', async () => {
    const files = [...(await jsonFiles(join(root, 'site'))), ...(await jsonFiles(join(root, 'paid')))];
    expect(files.length).toBeGreaterThan(30);
    const short: string[] = [];
    for (const file of files) {
      const body = JSON.parse(await readFile(file, 'utf8')) as {
        disclaimer?: unknown;
        educational_notice?: unknown;
      };
      const notice = body.disclaimer ?? body.educational_notice;
      const text = typeof notice === 'string' ? notice : '';
      const missing = SCOPE.filter((words) => !text.includes(words));
      if (missing.length > 0) short.push(`${relative(root, file)}: lacks ${missing.join(', ')}`);
    }
    expect(short).toEqual([]);
  });

  it('a finished history day written with the earlier notice still passes emi validate', async () => {
    const days = join(root, 'site', 'api', 'history', 'statistics');
    const day = (await readdir(days)).find((name) => /^\d{4}-\d{2}-\d{2}\.json$/.test(name));
    if (!day) throw new Error('no history day file was published');
    const file = join(days, day);
    const body = JSON.parse(await readFile(file, 'utf8')) as { educational_notice: string };
    await writeFile(file, JSON.stringify({ ...body, educational_notice: EARLIER_EDUCATIONAL_NOTICES[0] }));
    const failed = (await validateHistoryOutput(join(root, 'site'))).filter((check) => !check.ok);
    expect(failed).toEqual([]);

    // Any other text is refused: the notice is a published constant, not free text.
    await writeFile(file, JSON.stringify({ ...body, educational_notice: 'Not advice.' }));
    const refused = (await validateHistoryOutput(join(root, 'site'))).filter((check) => !check.ok);
    expect(refused.map((check) => check.file)).toContain(`api/history/statistics/${day}`);
  });

  it("the day's file written by another release (a notice this one does not know) gets the next run's row", async () => {
    const dir = await tempDir('emi-notice-day-');
    const first = Date.parse('2026-11-20T12:00:00Z');
    await publishSimulatedRuns(dir, [first]);
    const file = join(dir, 'site', 'api', 'history', 'statistics', '2026-11-20.json');
    const body = JSON.parse(await readFile(file, 'utf8')) as { rows: unknown[] };
    await writeFile(file, JSON.stringify({ ...body, educational_notice: 'A notice of a later release.' }));
    await publishSimulatedRuns(dir, [first + 20 * 60_000]);
    const after = JSON.parse(await readFile(file, 'utf8')) as { rows: unknown[]; educational_notice: string };
    expect(after.rows).toHaveLength(body.rows.length + 1); // was: taken for damaged, the run's row not kept
    expect(after.educational_notice).toBe(EDUCATIONAL_NOTICE);
  });
});
