// The served generation's folder lost (deleted by hand, a disk repair): the published history lives in the
// generations, so the next run carries it over from the newest generation left and says what was lost; when none
// is left, it refuses (the history would silently start from nothing) and says how to restore or start afresh.
import { mkdtemp, readFile, readdir, readlink, rename, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_RESOURCE_IDS, HistoryLatestFile } from '../schemas/history.ts';
import { generationsTidied, publishGeneration } from '../generator/publish/generations.ts';
import type { ServedLink } from '../generator/publish/generations.ts';
import { generateArgs, runEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';

const AT = ['2026-11-21T12:00:00.000Z', '2026-11-21T12:01:00.000Z', '2026-11-21T12:02:00.000Z'];

const readJson = async (path: string): Promise<unknown> => JSON.parse(await readFile(path, 'utf8'));
const latestRows = async (dir: string, id: string): Promise<string[]> =>
  HistoryLatestFile.parse(await readJson(join(dir, 'site', 'api', 'history', id, 'latest.json'))).rows.map(
    (row) => String(row.run_at),
  );
const generations = async (dir: string): Promise<string[]> =>
  (await readdir(join(dir, 'var', 'published'))).filter((name) => name.startsWith('g-')).sort();

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-lost-generation-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The lines on stderr, without build/'s "out of date" notice (others may be editing the sources meanwhile). */
const errorLines = (run: Finished): string[] =>
  run.stderr.split('\n').filter((line) => line && !line.includes('build/ is out of date'));

async function generate(dir: string, asOf: string): Promise<Finished> {
  return runEmi(dir, generateArgs(asOf));
}

describe('the served generation lost (the real emi)', () => {
  it('the next run carries the history over from the newest generation left, and says what was lost', async () => {
    const dir = await mkdtemp(join(root, 'case-'));
    for (const at of AT.slice(0, 2)) {
      const run = await generate(dir, at);
      expect(run.code, run.stderr).toBe(0);
    }
    const [older, served] = await generations(dir);
    expect(await readlink(join(dir, 'var', 'published', 'current'))).toBe(served);
    await rm(join(dir, 'var', 'published', served!), { recursive: true, force: true });

    const next = await generate(dir, AT[2]!);
    expect(next.code, next.stderr).toBe(0);
    expect(errorLines(next)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^emi: the served generation var/published/${served} is gone \\(ENOENT\\): carried the history and ` +
            `files over from var/published/${older}, the newest generation left; what only ${served} held is lost`,
        ),
      ) as unknown as string,
    ]);
    for (const id of HISTORY_RESOURCE_IDS) {
      // The row of the lost generation is gone; the older one's and this run's are kept.
      expect(await latestRows(dir, id)).toEqual([AT[0], AT[2]]);
    }
    // Once served again, the next run carries over as usual, without a word, and nothing is lost any more.
    const after = await generate(dir, '2026-11-21T12:03:00.000Z');
    expect(after.code, after.stderr).toBe(0);
    expect(errorLines(after)).toEqual([]);
    expect(await latestRows(dir, 'main-brain')).toEqual([AT[0], AT[2], '2026-11-21T12:03:00.000Z']);
    expect(await generations(dir)).not.toContain(older);
  }, 120_000);

  it('refuses, saying how to go on, when no generation is left; removing `current` starts afresh', async () => {
    const dir = await mkdtemp(join(root, 'case-'));
    const first = await generate(dir, AT[0]!);
    expect(first.code, first.stderr).toBe(0);
    const [served] = await generations(dir);
    await rm(join(dir, 'var', 'published', served!), { recursive: true, force: true });

    const refused = await generate(dir, AT[1]!);
    expect(refused.code).not.toBe(0);
    const message =
      `the served generation var/published/${served} is gone (ENOENT) and no other generation is left to carry ` +
      'the published history over from: restore it from a backup, or remove var/published/current to start a ' +
      'new history';
    expect(refused.stderr).toContain(message);
    const last = (await readJson(join(dir, 'var', 'last-run.json'))) as { status: string; error: string };
    expect(last).toMatchObject({ status: 'failed', error: expect.stringContaining(message) as unknown });
    expect(await generations(dir)).toEqual([]);

    await unlink(join(dir, 'var', 'published', 'current'));
    const fresh = await generate(dir, AT[2]!);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await latestRows(dir, 'statistics')).toEqual([AT[2]]);
  }, 120_000);
});

describe('carry-over from a store whose served generation is missing (in process)', () => {
  it('takes the newest complete generation left, and says so once for all the files carried', async () => {
    const dir = await mkdtemp(join(root, 'case-'));
    const store = join(dir, 'var', 'published');
    const links: ServedLink[] = [{ path: join(dir, 'site', 'api'), entry: 'api' }];
    for (const run of [1, 2, 3]) {
      await publishGeneration(store, links, async (generation) => {
        await generation.carryOver('api/history');
        await generation.write(`api/history/run-${run}.json`, `{"run":${run}}`);
      });
      await generationsTidied();
    }
    const names = (await readdir(store)).filter((name) => name.startsWith('g-')).sort();
    expect(names).toHaveLength(2);
    // The served one is gone, and `current` is dangling; the older one (runs 1 and 2) is left.
    await rm(join(store, names[1]!), { recursive: true });
    const warnings: string[] = [];
    const original = console.error;
    console.error = (line: string) => warnings.push(line);
    try {
      await publishGeneration(store, links, async (generation) => {
        await Promise.all([generation.carryOver('api/history'), generation.carryOver('api/other.php')]);
        await generation.write('api/history/run-4.json', '{"run":4}');
      });
    } finally {
      console.error = original;
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(names[0]);
    expect((await readdir(join(dir, 'site', 'api', 'history'))).sort()).toEqual([
      'run-1.json',
      'run-2.json',
      'run-4.json',
    ]);
  });

  it('takes a legacy generation (real folders kept from an older layout) when it is all that is left', async () => {
    const dir = await mkdtemp(join(root, 'case-'));
    const store = join(dir, 'var', 'published');
    const links: ServedLink[] = [{ path: join(dir, 'site', 'api'), entry: 'api' }];
    await publishGeneration(store, links, async (generation) => {
      await generation.write('api/history/run-1.json', '{"run":1}');
    });
    await generationsTidied();
    const [served] = (await readdir(store)).filter((name) => name.startsWith('g-'));
    const legacy = `legacy-${Date.now()}-0a0b0c0d`;
    await rename(join(store, served!), join(store, legacy)); // `current` now leads nowhere
    const warnings: string[] = [];
    const original = console.error;
    console.error = (line: string) => warnings.push(line);
    try {
      await publishGeneration(store, links, async (generation) => {
        await generation.carryOver('api/history');
      });
    } finally {
      console.error = original;
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${served} is gone (ENOENT)`);
    expect(warnings[0]).toContain(legacy);
    expect(await readdir(join(dir, 'site', 'api', 'history'))).toEqual(['run-1.json']);
  });
});
