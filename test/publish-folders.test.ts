// folderMaker: one `mkdir -p` per folder for a batch of files, none for the parents of a folder it made, and a
// failure that is not remembered.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { folderMaker, makeFolderEachTime } from '../generator/publish/folders.ts';

describe('folderMaker', () => {
  let root: string | null = null;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('makes each folder once, parents included, and the folders exist', async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-folders-'));
    const asked: string[] = [];
    const makeFolder = folderMaker(async (folder) => {
      asked.push(folder);
      await makeFolderEachTime(folder);
    });
    const deep = join(root, 'api', 'history', 'main-brain');
    await Promise.all([makeFolder(deep), makeFolder(deep), makeFolder(join(root, 'api', 'reasoning'))]);
    await makeFolder(join(root, 'api', 'history')); // a parent of one it made
    await makeFolder(join(root, 'api'));
    await makeFolder(deep);
    expect(asked.sort()).toEqual([deep, join(root, 'api', 'reasoning')].sort());
    expect((await stat(deep)).isDirectory()).toBe(true);
    expect((await stat(join(root, 'api', 'reasoning'))).isDirectory()).toBe(true);
  });

  it('asks again after a failure', async () => {
    let calls = 0;
    const makeFolder = folderMaker(async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('no space left'), { code: 'ENOSPC' });
    });
    await expect(makeFolder('/x/y')).rejects.toThrow('no space left');
    await expect(makeFolder('/x/y')).resolves.toBeUndefined();
    await makeFolder('/x/y');
    expect(calls).toBe(2);
  });
});
