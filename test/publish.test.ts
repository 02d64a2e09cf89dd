import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir as selfRemovingDir } from './helpers/temp-dir.ts';
import * as z from 'zod';
import { PublishValidationError, serialiseAll } from '../generator/publish/publish.ts';

const Body = z.strictObject({ n: z.number() });
const tempDir = () => selfRemovingDir('emi-publish-');

describe('serialiseAll', () => {
  it('gives every valid body as two-space JSON with a trailing newline, at its path under its root', () => {
    const root = '/site';
    expect(
      serialiseAll([
        { root, file: 'api/a.php', schema: Body, body: { n: 1 } },
        { root, file: 'api/b.php', schema: Body, body: { n: 2 } },
      ]),
    ).toEqual([
      { target: join(root, 'api/a.php'), data: '{\n  "n": 1\n}\n' },
      { target: join(root, 'api/b.php'), data: '{\n  "n": 2\n}\n' },
    ]);
  });

  it('refuses the whole set when any body fails its schema, naming each failing file', () => {
    const attempt = () =>
      serialiseAll([
        { root: '/site', file: 'a.php', schema: Body, body: { n: 99 } },
        { root: '/site', file: 'b.php', schema: Body, body: { n: 'two', extra: true } },
      ]);
    expect(attempt).toThrow(PublishValidationError);
    expect(attempt).toThrow(/b\.php/);
    expect(attempt).not.toThrow(/a\.php/);
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
