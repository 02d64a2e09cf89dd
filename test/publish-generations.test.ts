// All-or-nothing publishing: a failing file operation at any step leaves the previous generation served, whole.
import * as fs from 'node:fs/promises';
import { mkdir, readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  cleanGenerations,
  generationsTidied,
  publishGeneration,
  realFs,
} from '../generator/publish/generations.ts';
import type { PublishFs, ServedLink } from '../generator/publish/generations.ts';
import { tempDir } from './helpers/temp-dir.ts';

const FILES = ['api/a.php', 'api/reasoning/b.php', 'arena/c.php', 'paid/d.json'];

async function setup() {
  const dir = await tempDir('emi-generations-');
  const store = join(dir, 'var/published');
  const links: ServedLink[] = [
    { path: join(dir, 'site/api'), entry: 'api' },
    { path: join(dir, 'site/arena'), entry: 'arena' },
    { path: join(dir, 'paid'), entry: 'paid' },
  ];
  const publish = (run: number, ops: PublishFs = realFs) =>
    publishGeneration(
      store,
      links,
      async (generation) => {
        for (const file of FILES) await generation.write(file, `{"run":${run}}`);
      },
      ops,
    );
  const served = async () =>
    Promise.all(
      [
        join(dir, 'site/api/a.php'),
        join(dir, 'site/api/reasoning/b.php'),
        join(dir, 'site/arena/c.php'),
        join(dir, 'paid/d.json'),
      ].map(async (file) => (JSON.parse(await readFile(file, 'utf8')) as { run: number }).run),
    );
  return { dir, store, publish, served };
}

/** Real file operations, except that the n-th call of `name` fails. */
function failingAt(name: 'rename' | 'open' | 'symlink' | 'mkdir', n: number): PublishFs {
  let calls = 0;
  const original = realFs[name] as (...args: unknown[]) => Promise<unknown>;
  return {
    ...realFs,
    [name]: (...args: unknown[]) => {
      calls += 1;
      if (calls === n)
        return Promise.reject(Object.assign(new Error(`injected ${name} failure`), { code: 'EIO' }));
      return original(...args);
    },
  } as PublishFs;
}

describe('publishGeneration', () => {
  it('serves every folder of the new generation through its link', async () => {
    const { dir, publish, served } = await setup();
    await publish(1);
    expect(await served()).toEqual([1, 1, 1, 1]);
    await publish(2);
    expect(await served()).toEqual([2, 2, 2, 2]);
    expect(await realpath(join(dir, 'paid'))).toMatch(/var\/published\/g-\d+-[0-9a-f]+\/paid$/);
  });

  for (const op of ['rename', 'open', 'symlink', 'mkdir'] as const) {
    it(`keeps the previous generation served, whole, when any ${op} fails part-way`, async () => {
      const { store, publish, served } = await setup();
      await publish(1);
      // Fail the 1st, 2nd, ... call of the operation until a publish gets through without reaching it.
      for (let n = 1; ; n++) {
        const attempt = await publish(100 + n, failingAt(op, n)).then(
          () => 'published' as const,
          (error: Error) => error.message,
        );
        if (attempt === 'published') {
          expect(await served()).toEqual([100 + n, 100 + n, 100 + n, 100 + n]);
          break;
        }
        expect(attempt).toBe(`injected ${op} failure`);
        expect(await served()).toEqual([1, 1, 1, 1]);
        const names = await readdir(store);
        expect(names.filter((name) => name.startsWith('tmp-'))).toEqual([]);
        expect(n).toBeLessThan(50);
      }
    });
  }

  it('returns once the new generation is served; the next one begins only after the old ones are removed', async () => {
    const { store, publish, served } = await setup();
    await publish(1);
    await publish(2);
    // The removal after the third publish waits on a gate: publishing must not wait for it.
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gatedRm: PublishFs['rm'] = async (...args) => {
      await gate;
      return fs.rm(...args);
    };
    await publish(3, { ...realFs, rm: gatedRm });
    expect(await served()).toEqual([3, 3, 3, 3]);
    const generations = async () => (await readdir(store)).filter((name) => /^(g|tmp)-/.test(name));
    expect(await generations()).toHaveLength(3); // generation 1 not yet removed
    let fourthServed = false;
    const fourth = publish(4).then(() => (fourthServed = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fourthServed).toBe(false); // waits for the removal
    expect((await generations()).filter((name) => name.startsWith('tmp-'))).toEqual([]); // not even begun
    open();
    await fourth;
    await generationsTidied();
    expect(await served()).toEqual([4, 4, 4, 4]);
    expect(await generations()).toHaveLength(2);
  });

  it('a rename failing half-way (the switch) leaves the previous generation served', async () => {
    const { publish, served } = await setup();
    await publish(1);
    // Count the renames of a clean publish: the last one is the switch of `current`.
    let renames = 0;
    await publish(2, { ...realFs, rename: (a, b) => ((renames += 1), fs.rename(a, b)) });
    await expect(publish(3, failingAt('rename', renames))).rejects.toThrow('injected rename failure');
    expect(await served()).toEqual([2, 2, 2, 2]);
  });
});

describe('what publishing keeps', () => {
  it('never removes a real folder it found where a link belongs (kept as a legacy generation)', async () => {
    const { dir, store, publish, served } = await setup();
    await mkdir(join(dir, 'paid'), { recursive: true });
    await writeFile(join(dir, 'paid/mine.json'), 'the operator’s own copy');
    for (let run = 1; run <= 4; run++) await publish(run);
    await generationsTidied();
    expect(await served()).toEqual([4, 4, 4, 4]);
    const legacy = (await readdir(store)).filter((name) => name.startsWith('legacy-'));
    expect(legacy).toHaveLength(1);
    expect(await readFile(join(store, legacy[0]!, 'paid/mine.json'), 'utf8')).toBe('the operator’s own copy');
  });

  /**
   * Two runs meeting the old layout (a real `paid` folder) at once: run 1 has seen the folder and is stopped just
   * before moving it while run 2 goes as far as `run2Until` (its link made, or only its move done).
   */
  async function raceForRealFolder(run2Until: 'linked' | 'moved') {
    const { dir, store, publish, served } = await setup();
    await mkdir(join(dir, 'paid'), { recursive: true });
    await writeFile(join(dir, 'paid/mine.json'), 'the operator’s own copy');
    const pauseAt = (matches: (from: string, to: string) => boolean) => {
      let reached = () => {};
      let go = () => {};
      const at = new Promise<void>((resolve) => (reached = resolve));
      const resume = new Promise<void>((resolve) => (go = resolve));
      const ops: PublishFs = {
        ...realFs,
        rename: async (from, to) => {
          if (matches(String(from), String(to))) {
            reached();
            await resume;
          }
          return fs.rename(from, to);
        },
      };
      return { at, go, ops };
    };
    const run1 = pauseAt((from) => from === join(dir, 'paid'));
    // Run 2's link replaces the moved folder's place by renaming a fresh link over it.
    const run2 = pauseAt((_from, to) => run2Until === 'moved' && to === join(dir, 'paid'));
    const first = publish(1, run1.ops);
    await run1.at;
    const second = publish(2, run2.ops);
    if (run2Until === 'moved') await run2.at;
    else await second;
    run1.go();
    await expect(first).resolves.toBeDefined();
    run2.go();
    await expect(second).resolves.toBeDefined();
    await generationsTidied();
    const legacy = (await readdir(store)).filter((name) => name.startsWith('legacy-'));
    expect(legacy).toHaveLength(1);
    expect(await readFile(join(store, legacy[0]!, 'paid/mine.json'), 'utf8')).toBe('the operator’s own copy');
    return served();
  }

  it('two runs meeting a real folder at once, the other one linked: both publish, the folder kept once', async () => {
    // Before: run 1 moved run 2's link into a second legacy folder, announced as "a real folder".
    expect(await raceForRealFolder('linked')).toEqual([1, 1, 1, 1]);
  });

  it('two runs meeting a real folder at once, the other one only moved it: both publish, no empty legacy', async () => {
    // Before: run 1 failed with ENOENT on the folder run 2 had just moved.
    expect(await raceForRealFolder('moved')).toEqual([2, 2, 2, 2]);
  });

  it('keeps the generation served before the last one when the clock has gone back', async () => {
    const { store, publish, served } = await setup();
    const clock = vi.spyOn(Date, 'now');
    try {
      const generations = async () => (await readdir(store)).filter((name) => name.startsWith('g-'));
      const at = async (now: number, run: number) => {
        clock.mockReturnValue(now);
        await publish(run);
        await generationsTidied();
        return realpath(join(store, 'current'));
      };
      await at(3_000_000, 1);
      await at(4_000_000, 2);
      // The clock is set back an hour: the generations published from now on must still count as the newest.
      const third = await at(400_000, 3);
      await at(500_000, 4);
      expect(await served()).toEqual([4, 4, 4, 4]);
      const kept = await generations();
      expect(kept).toHaveLength(2);
      expect(kept.map((name) => join(store, name))).toContain(third); // the one before: readers may still be in it
    } finally {
      clock.mockRestore();
    }
  });

  it("never sweeps away another run's switch under way (its fresh link made, not yet renamed)", async () => {
    const { store, publish, served } = await setup();
    await publish(1);
    // Run 2 stops between making its fresh `current` link and renaming it over `current`, while another run
    // (a concurrent `emi build` on the same store) tidies the store.
    let reached = () => {};
    const atSwitch = new Promise<void>((resolve) => (reached = resolve));
    let go = () => {};
    const resume = new Promise<void>((resolve) => (go = resolve));
    const pausing: PublishFs = {
      ...realFs,
      rename: async (from, to) => {
        if (to === join(store, 'current')) {
          reached();
          await resume;
        }
        return fs.rename(from, to);
      },
    };
    const second = publish(2, pausing);
    await atSwitch;
    await cleanGenerations(store);
    go();
    // Before: the tidying removed the link, and the switch failed with ENOENT.
    await expect(second).resolves.toBeDefined();
    expect(await served()).toEqual([2, 2, 2, 2]);
    // A dead run's leftover link still goes.
    await fs.symlink('nowhere', join(store, '.current.999999999.abcd'));
    await cleanGenerations(store);
    expect((await readdir(store)).filter((name) => name.startsWith('.current.'))).toEqual([]);
  });
});
