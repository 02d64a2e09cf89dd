import { spawn } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir as selfRemovingDir } from './helpers/temp-dir.ts';
import * as z from 'zod';
import { PublishValidationError, publishAll } from '../generator/publish/publish.ts';

const Body = z.strictObject({ n: z.number() });
const tempDir = () => selfRemovingDir('emi-publish-');

describe('publishAll', () => {
  it('writes every valid body as two-space JSON', async () => {
    const root = await tempDir();
    await publishAll([
      { root, file: 'api/a.php', schema: Body, body: { n: 1 } },
      { root, file: 'api/b.php', schema: Body, body: { n: 2 } },
    ]);
    expect(await readFile(join(root, 'api/a.php'), 'utf8')).toBe('{\n  "n": 1\n}\n');
    expect(JSON.parse(await readFile(join(root, 'api/b.php'), 'utf8'))).toEqual({ n: 2 });
  });

  it('writes nothing when any body fails its schema, and names the file', async () => {
    const root = await tempDir();
    await publishAll([{ root, file: 'a.php', schema: Body, body: { n: 1 } }]);
    const attempt = publishAll([
      { root, file: 'a.php', schema: Body, body: { n: 99 } },
      { root, file: 'b.php', schema: Body, body: { n: 'two', extra: true } },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(PublishValidationError);
    await expect(attempt).rejects.toThrow(/b\.php/);
    expect(JSON.parse(await readFile(join(root, 'a.php'), 'utf8'))).toEqual({ n: 1 });
    expect((await readdir(root)).sort()).toEqual(['a.php']);
  });

  it('leaves the last good files and no temporary files when a write fails part-way', async () => {
    const root = await tempDir();
    await publishAll([{ root, file: 'a.php', schema: Body, body: { n: 1 } }]);
    await writeFile(join(root, 'blocker'), 'a file where a folder is needed');
    const attempt = publishAll([
      { root, file: 'a.php', schema: Body, body: { n: 2 } },
      { root, file: 'blocker/c.php', schema: Body, body: { n: 3 } },
    ]);
    await expect(attempt).rejects.toThrow();
    expect(JSON.parse(await readFile(join(root, 'a.php'), 'utf8'))).toEqual({ n: 1 });
    expect((await readdir(root)).sort()).toEqual(['a.php', 'blocker']);
  });
});

describe('writeFileAtomic', () => {
  it('never leaves a torn file when the writing process is killed mid-write', async () => {
    const root = await tempDir();
    const target = join(root, 'big.json');
    const old = JSON.stringify({ version: 'old' });
    await writeFile(target, old);
    // A child process rewrites the file with ~40 MB of JSON, again and again, until it is killed.
    const script = `
      import { writeFileAtomic } from ${JSON.stringify(new URL('../generator/publish/atomic-write.ts', import.meta.url).pathname)};
      const body = JSON.stringify({ version: 'new', pad: 'x'.repeat(40_000_000) });
      process.stdout.write('ready\\n');
      for (;;) await writeFileAtomic(${JSON.stringify(target)}, body);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((ready) => child.stdout.once('data', () => ready()));
    await new Promise((wait) => setTimeout(wait, 150));
    child.kill('SIGKILL');
    await new Promise((done) => child.once('exit', done));

    const text = await readFile(target, 'utf8');
    const version = (JSON.parse(text) as { version: string }).version; // throws if torn
    expect(['old', 'new']).toContain(version);
  });
});
