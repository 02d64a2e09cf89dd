// Pins the rules of all-or-nothing publishing that a mutation audit (05cc84f) found no test enforcing: each case
// below fails if one line of generator/publish/generations.ts or atomic-write.ts is changed the way the audit did.
// What readers see is the published promise (README, "All-or-nothing publishing"): the old generation or the new
// one, never a half-written one, never a folder served from a generation that was removed.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import { mkdir, readFile, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../generator/publish/atomic-write.ts';
import {
  beginGeneration,
  cleanGenerations,
  generationsTidied,
  publishGeneration,
  realFs,
} from '../generator/publish/generations.ts';
import type { PublishFs, ServedLink } from '../generator/publish/generations.ts';
import { tempDir } from './helpers/temp-dir.ts';

/** A store under a new folder, served through `site/api`. */
async function apiStore() {
  const dir = await tempDir('emi-pinned-generations-');
  const store = join(dir, 'var', 'published');
  const links: ServedLink[] = [{ path: join(dir, 'site', 'api'), entry: 'api' }];
  const publish = async (run: string, ops: PublishFs = realFs) => {
    const generation = await publishGeneration(store, links, async (g) => g.write('api/run.json', run), ops);
    await generationsTidied();
    return generation;
  };
  const served = () => readFile(join(dir, 'site', 'api', 'run.json'), 'utf8');
  const current = () => readlink(join(store, 'current'));
  const generations = async () => (await readdir(store)).filter((name) => name.startsWith('g-')).sort();
  return { dir, store, links, publish, served, current, generations };
}

/** Runs `fn` with console.error collected instead of printed. */
async function quietly<T>(fn: () => Promise<T>): Promise<{ value: T; said: string[] }> {
  const said: string[] = [];
  const original = console.error;
  console.error = (line: string) => void said.push(line);
  try {
    return { value: await fn(), said };
  } finally {
    console.error = original;
  }
}

describe('carrying over when the served generation is gone', () => {
  /** A store whose `current` names a missing generation; `left` are the folders still there, each with its name. */
  async function lostStore(left: string[]) {
    const setup = await apiStore();
    await mkdir(setup.store, { recursive: true });
    await symlink('g-0000000003000-0c0c0c0c', join(setup.store, 'current'));
    for (const name of left) {
      await mkdir(join(setup.store, name, 'api', 'history'), { recursive: true });
      await writeFile(join(setup.store, name, 'api', 'history', 'from.txt'), name);
    }
    const { said } = await quietly(() =>
      publishGeneration(setup.store, setup.links, async (g) => void (await g.carryOver('api/history'))),
    );
    const carried = await readFile(join(setup.dir, 'site', 'api', 'history', 'from.txt'), 'utf8');
    return { carried, said };
  }

  // Mutant G6: the generations left sorted oldest first.
  it('takes the newest generation left (by its time), a complete one newer than a legacy one', async () => {
    const { carried, said } = await lostStore(['legacy-0000000001000-0a0a0a0a', 'g-0000000002000-0b0b0b0b']);
    expect(carried).toBe('g-0000000002000-0b0b0b0b');
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('g-0000000002000-0b0b0b0b, the newest generation left');
  });

  it('takes the newest generation left (by its time), a legacy one newer than a complete one', async () => {
    // (Only one complete generation besides the served one survives the tidying at the start of a run: legacy
    // folders are never removed, so they make the second candidate.)
    const { carried } = await lostStore(['g-0000000001000-0a0a0a0a', 'legacy-0000000002000-0b0b0b0b']);
    expect(carried).toBe('legacy-0000000002000-0b0b0b0b');
  });
});

describe('rollback and abort', () => {
  // Mutant G9: rollback removes the new generation without switching `current` back.
  it('rollback after commit serves the generation served before, and removes the new one', async () => {
    const { store, links, publish, served, current, generations } = await apiStore();
    await publish('A');
    const a = await current();
    const b = await beginGeneration(store, links);
    await b.write('api/run.json', 'B');
    await b.commit();
    expect(await served()).toBe('B');
    await b.rollback();
    expect(await current()).toBe(a);
    expect(await served()).toBe('A');
    expect(await generations()).toEqual([a]);
  });

  // Mutant G10: abort without its state guard removes the generation it just served.
  it('abort after commit changes nothing: the committed generation stays served', async () => {
    const { store, links, served, current, generations } = await apiStore();
    const b = await beginGeneration(store, links);
    await b.write('api/run.json', 'B');
    await b.commit();
    const committed = await current();
    await b.abort();
    expect(await current()).toBe(committed);
    expect(await generations()).toEqual([committed]);
    expect(await served()).toBe('B');
  });

  // Mutant G8: no rollback when a link leads nowhere after the switch.
  it('a link that leads nowhere after the switch: the commit fails and the previous generation is served again', async () => {
    const { dir, publish, current, generations } = await apiStore();
    await publish('A');
    const a = await current();
    // The link is made again by the next run (it was removed), and what it is made as leads nowhere.
    await fs.rm(join(dir, 'site', 'api'));
    const danglingLinks: PublishFs = {
      ...realFs,
      symlink: (target, path, type) =>
        String(path).endsWith('.link') ? fs.symlink('nowhere', path, type) : fs.symlink(target, path, type),
    };
    await expect(publish('B', danglingLinks)).rejects.toThrow(
      /does not lead to the published files after the switch/,
    );
    expect(await current()).toBe(a);
    expect(await generations()).toEqual([a]);
  });
});

describe('a real folder where a link belongs, on a first run', () => {
  // Mutant G12: the real folder moved into the store without `current` switched to it.
  it('stays readable through its link when the switch to the new generation then fails', async () => {
    const { dir, publish, current, generations } = await apiStore();
    await mkdir(join(dir, 'site', 'api'), { recursive: true });
    await writeFile(join(dir, 'site', 'api', 'mine.json'), 'the operator’s own file');
    // Every switch of `current` to a complete generation fails (a switch to the legacy one goes through).
    const switchFails: PublishFs = {
      ...realFs,
      rename: async (from, to) => {
        const name = String(from).split('/').pop() ?? '';
        if (name.startsWith('.current.') && (await fs.readlink(from)).startsWith('g-')) {
          throw Object.assign(new Error('injected rename failure'), { code: 'EIO' });
        }
        return fs.rename(from, to);
      },
    };
    const { said } = await quietly(() => expect(publish('B', switchFails)).rejects.toThrow(/injected/));
    expect(said.join('\n')).toMatch(/site\/api was a real folder, not a link: moved it to .*legacy-/);
    expect(await readFile(join(dir, 'site', 'api', 'mine.json'), 'utf8')).toBe('the operator’s own file');
    expect(await current()).toMatch(/^legacy-\d+-[0-9a-f]+$/);
    expect(await generations()).toEqual([]);
  });
});

describe('tidying a store', () => {
  const children: Array<ReturnType<typeof spawn>> = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        const closed = new Promise((resolve) => child.once('close', resolve));
        child.kill('SIGKILL');
        await closed;
      }
    }
  });

  // Mutant G2: a live process's unfinished generation treated as a dead one's.
  it("keeps another live process's unfinished generation, removes a dead one's", async () => {
    const { store } = await apiStore();
    const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    children.push(live);
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.once('close', resolve));
    const liveTmp = `tmp-${live.pid}-abcd`;
    const deadTmp = `tmp-${dead.pid}-abcd`;
    for (const name of [liveTmp, deadTmp]) await mkdir(join(store, name, 'api'), { recursive: true });
    await cleanGenerations(store);
    expect((await readdir(store)).filter((name) => name.startsWith('tmp-'))).toEqual([liveTmp]);
  });
});

describe('writeFileAtomic', () => {
  const temporaries = async (folder: string) =>
    (await readdir(folder)).filter((name) => name.endsWith('.tmp'));

  // Mutant AW1: the temporary file left when writing it fails.
  it('removes its temporary file when the write fails', async () => {
    const dir = await tempDir('emi-pinned-atomic-');
    // Data the write cannot take (what a failing write looks like from here: the file is open, nothing lands).
    const unwritable = 42 as unknown as string;
    await expect(writeFileAtomic(join(dir, 'file.json'), unwritable)).rejects.toThrow();
    expect(await readdir(dir)).toEqual([]);
  });

  // Mutant AW2: the temporary file left when the rename fails.
  it('removes its temporary file when the rename fails (the target is a folder with files)', async () => {
    const dir = await tempDir('emi-pinned-atomic-');
    await mkdir(join(dir, 'file.json'));
    await writeFile(join(dir, 'file.json', 'inside'), 'x');
    await expect(writeFileAtomic(join(dir, 'file.json'), '{}')).rejects.toThrow();
    expect(await temporaries(dir)).toEqual([]);
    expect(await readdir(dir)).toEqual(['file.json']);
  });
});
