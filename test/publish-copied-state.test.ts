// A deployment moved or restored with a tool that follows symlinks (`scp -r`, `cp -rL`, `rsync -rL`, a zip): the
// store's `current` link arrives as a real folder, a copy of the generation it named. The next run makes that folder
// a generation again, says so, and switches as usual, carrying the copied history over; a run that fails after that
// step loses nothing. Copies are made with Node's fs.cp and `dereference: true`, what `cp -rL` does.
import { cp, lstat, mkdir, readFile, readdir, readlink, rm } from 'node:fs/promises';
import * as nodeFs from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { HISTORY_RESOURCE_IDS, HistoryLatestFile } from '../schemas/history.ts';
import {
  beginGeneration,
  generationsTidied,
  publishGeneration,
  realFs,
} from '../generator/publish/generations.ts';
import type { PublishFs, ServedLink } from '../generator/publish/generations.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { errorLines, expectOk, generateArgs, runEmi } from './ops-cli.ts';

const GENERATION = /^g-\d+-[0-9a-f]+$/;
const HISTORY_INDEX = 'api/history/index.json';
const LEGACY = /^legacy-\d+-[0-9a-f]+$/;

/** What `cp -rL` does: every symlink copied as the file or folder it leads to. */
const copyFollowingLinks = (from: string, to: string): Promise<void> =>
  cp(from, to, { recursive: true, dereference: true });

const namesIn = async (store: string, pattern: RegExp): Promise<string[]> =>
  (await readdir(store)).filter((name) => pattern.test(name)).sort();

/** A deployment in `dir` (var/published served through site/api and paid), `runs` runs of history in it. */
async function deploy(dir: string, runs: number) {
  const store = join(dir, 'var/published');
  const links: ServedLink[] = [
    { path: join(dir, 'site/api'), entry: 'api' },
    { path: join(dir, 'paid'), entry: 'paid' },
  ];
  for (let run = 1; run <= runs; run++) await publishRun(store, links, run);
  return { store, links };
}

/** One run: the served history carried over, a file of its own added, the index and the paid body replaced. */
async function publishRun(store: string, links: readonly ServedLink[], run: number, fs: PublishFs = realFs) {
  await publishGeneration(
    store,
    links,
    async (generation) => {
      await generation.carryOver('api/history');
      await generation.write(`api/history/run-${run}.json`, `{"run":${run}}`);
      // Every real run writes the history's index anew (history/store.ts): the carried-over one is replaced.
      await rm(join(generation.dir, HISTORY_INDEX), { force: true });
      await generation.write(HISTORY_INDEX, `{"runs":${run}}`);
      await generation.write('paid/body.json', `{"run":${run}}`);
    },
    fs,
  );
  await generationsTidied();
}

/** A deployment made in one folder and copied, following links, to another: the copy's folder and store. */
async function copiedDeployment(runs: number) {
  const old = await tempDir('emi-copied-old-');
  await deploy(old, runs);
  const dir = await tempDir('emi-copied-new-');
  await copyFollowingLinks(old, dir);
  const { store, links } = await deploy(dir, 0);
  return { dir, store, links };
}

/** console.error's lines while `work` runs. */
async function stderrOf(work: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return lines;
}

/** The runs' files in a history (its index left out: every generation holds one). */
const historyIn = async (folder: string): Promise<string[]> =>
  (await readdir(join(folder, 'api/history'))).filter((name) => name !== 'index.json').sort();

describe('a store copied by a tool that follows symlinks (in process)', () => {
  it('makes the copied `current` a generation, says so, serves the next run and carries the history over', async () => {
    const { dir, store, links } = await copiedDeployment(2);
    expect((await lstat(join(store, 'current'))).isDirectory()).toBe(true);
    const copied = await namesIn(store, GENERATION);

    const lines = await stderrOf(() => publishRun(store, links, 3));

    const served = await readlink(join(store, 'current'));
    expect(served).toMatch(GENERATION);
    expect(await historyIn(join(dir, 'site'))).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
    expect(JSON.parse(await readFile(join(dir, 'paid/body.json'), 'utf8'))).toEqual({ run: 3 });
    // One line for `current`, naming it and the generation it became; the served links' copies as before.
    const adoption = lines.filter((line) => line.includes(join(store, 'current')));
    expect(adoption).toEqual([
      expect.stringMatching(
        /^emi: .*var\/published\/current was a real folder, not a link .*: made it the generation g-\d+-[0-9a-f]+, /,
      ),
    ]);
    const adopted = /the generation (g-\d+-[0-9a-f]+)/.exec(adoption[0]!)![1]!;
    expect(lines.filter((line) => line.includes('was a real folder, not a link: moved it to'))).toHaveLength(
      2,
    );
    // Named after every copied generation (it was the served one), so pruning keeps it and removes the copies:
    // the copied folder `current` named is not kept twice.
    expect(copied.every((name) => name < adopted)).toBe(true);
    expect(await namesIn(store, GENERATION)).toEqual([adopted, served]);
    expect(await historyIn(join(store, adopted))).toEqual(['run-1.json', 'run-2.json']);
    // The served links' copies: one legacy generation, as any real folder found where a link belongs.
    expect(await namesIn(store, LEGACY)).toHaveLength(1);
  });

  it('a run after that one goes on as usual, without a word', async () => {
    const { dir, store, links } = await copiedDeployment(1);
    await stderrOf(() => publishRun(store, links, 2));
    const lines = await stderrOf(() => publishRun(store, links, 3));
    expect(lines).toEqual([]);
    expect(await historyIn(join(dir, 'site'))).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
    expect(await namesIn(store, GENERATION)).toHaveLength(2);
  });

  it('loses nothing when the run fails after the adoption: the next one carries the copied history over', async () => {
    const { dir, store, links } = await copiedDeployment(2);
    const failed = stderrOf(() =>
      publishGeneration(store, links, async (generation) => {
        await generation.carryOver('api/history');
        throw new Error('the run failed');
      }),
    );
    await expect(failed).rejects.toThrow('the run failed');
    const served = await readlink(join(store, 'current'));
    expect(await historyIn(join(store, served))).toEqual(['run-1.json', 'run-2.json']);
    // The copied served folders are still where they were, still serving the copied files.
    expect(await historyIn(join(dir, 'site'))).toEqual(['run-1.json', 'run-2.json']);

    await stderrOf(() => publishRun(store, links, 3));
    expect(await historyIn(join(dir, 'site'))).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
  });

  it('puts the folder back as `current` when the new link cannot be put in its place', async () => {
    const { store, links } = await copiedDeployment(2);
    // The first rename moves the folder, the second would put the new link in its place: it fails.
    let renames = 0;
    const failing: PublishFs = {
      ...realFs,
      rename: async (from, to) => {
        renames += 1;
        if (renames === 2) throw Object.assign(new Error('injected rename failure'), { code: 'EIO' });
        return realFs.rename(from, to);
      },
    };
    await expect(stderrOf(() => publishRun(store, links, 3, failing))).rejects.toThrow(
      'injected rename failure',
    );
    expect((await lstat(join(store, 'current'))).isDirectory()).toBe(true);
    expect(await historyIn(join(store, 'current'))).toEqual(['run-1.json', 'run-2.json']);
    expect((await readdir(store)).filter((name) => name.startsWith('.current.'))).toEqual([]);

    await stderrOf(() => publishRun(store, links, 3));
    expect(await historyIn(join(store, 'current'))).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
  });

  it("leaves another run's adoption alone: a `current` that became a link meanwhile is put back", async () => {
    const dir = await tempDir('emi-copied-race-');
    const { store, links } = await deploy(dir, 2);
    const served = await readlink(join(store, 'current'));
    const before = (await readdir(store)).sort();
    // This run saw a real folder (lstat) just before another run made it a generation and `current` its link.
    let looked = false;
    const racing: PublishFs = {
      ...realFs,
      lstat: (async (path: string) => {
        const info = await nodeFs.lstat(path);
        if (looked || !path.endsWith('/current')) return info;
        looked = true;
        return Object.assign(Object.create(Object.getPrototypeOf(info) as object) as typeof info, info, {
          isDirectory: () => true,
          isSymbolicLink: () => false,
        });
      }) as PublishFs['lstat'],
    };
    const lines = await stderrOf(async () => {
      const generation = await beginGeneration(store, links, racing);
      expect(generation.previous).toBe(join(store, served));
      await generation.abort();
    });
    expect(looked).toBe(true);
    expect(lines).toEqual([]);
    expect(await readlink(join(store, 'current'))).toBe(served);
    expect((await readdir(store)).sort()).toEqual(before);
  });
});

/** Every name below `folder` (links not followed), with what each is: the whole store, to compare before and after. */
async function treeOf(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .map((entry) => {
      const kind = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'folder' : 'file';
      return `${join(entry.parentPath, entry.name).slice(folder.length)} ${kind}`;
    })
    .sort();
}

/** The one-line refusal of a `current` that holds no complete generation, naming it and the two ways out. */
const incompleteCurrent = (store: string) =>
  new RegExp(
    `^${join(store, 'current').replaceAll('/', '\\/')} is a real folder, not a link, but holds no complete ` +
      `generation \\(no ${HISTORY_INDEX.replaceAll('/', '\\/')}\\b.*: restore it from a backup, or remove ` +
      `${join(store, 'current').replaceAll('/', '\\/')} to start a new history$`,
  );

describe('a `current` folder that holds no complete generation (an empty or unfinished copy)', () => {
  /** A deployment of two runs whose generations are all gone, `current` made a real folder by `fill`. */
  async function withCurrentFolder(fill: (current: string, served: string) => Promise<void>) {
    const dir = await tempDir('emi-copied-incomplete-');
    const { store, links } = await deploy(dir, 2);
    const served = join(dir, 'served-copy');
    await copyFollowingLinks(join(store, 'current'), served);
    for (const name of await namesIn(store, GENERATION)) await rm(join(store, name), { recursive: true });
    await rm(join(store, 'current'));
    await mkdir(join(store, 'current'));
    await fill(join(store, 'current'), served);
    return { dir, store, links };
  }

  /** The run fails with the refusal, says nothing else, and leaves every file of the deployment as it was. */
  async function expectRefusedUntouched(dir: string, store: string, links: readonly ServedLink[]) {
    const before = await treeOf(dir);
    const lines = await stderrOf(() =>
      expect(publishRun(store, links, 3)).rejects.toThrow(incompleteCurrent(store)),
    );
    expect(lines).toEqual([]);
    expect(await treeOf(dir)).toEqual(before);
    expect((await lstat(join(store, 'current'))).isDirectory()).toBe(true);
  }

  it('refuses an empty `current`, touching nothing, rather than start the history again', async () => {
    const { dir, store, links } = await withCurrentFolder(async () => undefined);
    await expectRefusedUntouched(dir, store, links);
  });

  it('refuses a `current` copied without the history index, touching nothing', async () => {
    const { dir, store, links } = await withCurrentFolder(async (current, served) => {
      await cp(served, current, { recursive: true });
      await rm(join(current, HISTORY_INDEX));
    });
    expect(await historyIn(join(store, 'current'))).toEqual(['run-1.json', 'run-2.json']);
    await expectRefusedUntouched(dir, store, links);
  });

  it('removing `current`, as the refusal says, starts a new history', async () => {
    const { dir, store, links } = await withCurrentFolder(async () => undefined);
    await stderrOf(() => expect(publishRun(store, links, 3)).rejects.toThrow(incompleteCurrent(store)));
    await rm(join(store, 'current'), { recursive: true });
    await stderrOf(() => publishRun(store, links, 3));
    expect(await readlink(join(store, 'current'))).toMatch(GENERATION);
    expect(await historyIn(join(dir, 'site'))).toEqual(['run-3.json']);
  });

  it('still adopts a `current` that holds the history index', async () => {
    const { dir, store, links } = await withCurrentFolder(async (current, served) => {
      await cp(served, current, { recursive: true });
    });
    const lines = await stderrOf(() => publishRun(store, links, 3));
    expect(lines).toContainEqual(
      expect.stringMatching(/ was a real folder, not a link .*: made it the generation /),
    );
    expect(await historyIn(join(dir, 'site'))).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
  });
});

const AT = ['2026-11-21T12:00:00.000Z', '2026-11-21T12:01:00.000Z', '2026-11-21T12:02:00.000Z'];
const BASE_URL = 'https://emi.example.org';

const latestRows = async (dir: string, id: string): Promise<string[]> =>
  HistoryLatestFile.parse(
    JSON.parse(await readFile(join(dir, 'site/api/history', id, 'latest.json'), 'utf8')),
  ).rows.map((row) => String(row.run_at));

describe('a deployment copied by a tool that follows symlinks (the real emi)', () => {
  it("`emi generate` and `emi build` succeed on the copy, and the old machine's history is still served", async () => {
    const old = await tempDir('emi-copied-cli-old-');
    for (const at of AT.slice(0, 2)) expectOk(await runEmi(old, generateArgs(at)));
    expectOk(await runEmi(old, ['build', '--base-url', BASE_URL]));
    const dir = await tempDir('emi-copied-cli-new-');
    await copyFollowingLinks(old, dir);
    expect((await lstat(join(dir, 'var/published/current'))).isDirectory()).toBe(true);
    expect((await lstat(join(dir, '.dist.generations/current'))).isDirectory()).toBe(true);

    const run = await runEmi(dir, generateArgs(AT[2]!));
    expectOk(run);
    expect(errorLines(run)).toContainEqual(
      expect.stringMatching(
        /^emi: var\/published\/current was a real folder, not a link \(.*\): made it the generation g-\d+-[0-9a-f]+, /,
      ),
    );
    for (const id of HISTORY_RESOURCE_IDS) expect(await latestRows(dir, id)).toEqual(AT);
    expect(await namesIn(join(dir, 'var/published'), GENERATION)).toHaveLength(2);

    const build = await runEmi(dir, ['build', '--base-url', BASE_URL]);
    expectOk(build);
    expect(errorLines(build)).toContainEqual(
      expect.stringMatching(/^emi: \.dist\.generations\/current was a real folder, not a link /),
    );
    expect(await readlink(join(dir, '.dist.generations/current'))).toMatch(GENERATION);
    expect((await lstat(join(dir, 'dist'))).isSymbolicLink()).toBe(true);

    // From then on, runs go on as on the old machine, without a word about it.
    const next = await runEmi(dir, generateArgs('2026-11-21T12:03:00.000Z'));
    expectOk(next);
    expect(errorLines(next)).toEqual([]);
    expect(await latestRows(dir, 'main-brain')).toEqual([...AT, '2026-11-21T12:03:00.000Z']);
  }, 120_000);

  it("`emi backfill` succeeds on the copy and keeps the old machine's history", async () => {
    const old = await tempDir('emi-copied-cli-old-');
    for (const at of AT.slice(0, 2)) expectOk(await runEmi(old, generateArgs(at)));
    const dir = await tempDir('emi-copied-cli-new-');
    await copyFollowingLinks(old, dir);

    const run = await runEmi(dir, ['backfill', '--days', '1', '--as-of', AT[1]!]);
    expectOk(run);
    expect(errorLines(run)).toContainEqual(
      expect.stringMatching(/^emi: var\/published\/current was a real folder, not a link /),
    );
    expect(await latestRows(dir, 'statistics')).toEqual(AT.slice(0, 2));
    expect(await readlink(join(dir, 'var/published/current'))).toMatch(GENERATION);
  }, 120_000);
});
