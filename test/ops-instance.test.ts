// One instance per folder: a second `emi up` on the same folders says what is running and touches nothing.
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UP_ON_FREE_PORTS, errorLines, runEmi, startEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

/** Every entry below dir with its modification time, without following links (what "touched" means here). */
async function snapshot(dir: string): Promise<Record<string, number>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const out: Record<string, number> = {};
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = (await stat(path).catch(() => ({ mtimeMs: -1 }))).mtimeMs;
  }
  return out;
}

const upArgs = [...UP_ON_FREE_PORTS];

describe('a second emi up on the same folders', () => {
  it('says what is running (pid, address) and exits non-zero, touching nothing', async () => {
    const dir = await tempDir('emi-instance-');
    const first = startEmi(dir, upArgs);
    try {
      await first.waitFor(/site: http:\/\/127\.0\.0\.1:\d+\//);
      expect(first.child.exitCode).toBeNull(); // still running
      // The address is recorded before it is announced: whoever reads the announcement finds it in the claim.
      const claim = JSON.parse(await readFile(join(dir, '.dist.instance.json'), 'utf8')) as { url?: string };
      expect(claim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const before = await snapshot(dir);
      const second = await runEmi(dir, upArgs);
      expect(second.code).not.toBe(0);
      // Refused after a moment's grace, without waiting: the first one is running, not stopping.
      expect(second.stderr).not.toMatch(/waiting|waited/);
      expect(second.stderr).toMatch(
        new RegExp(
          `^emi: emi up is already running for ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/dist ` +
            `\\(pid ${first.child.pid} on .+, http://127\\.0\\.0\\.1:\\d+, since .+\\): stop it first`,
          'm',
        ),
      );
      expect(await snapshot(dir)).toEqual(before);
    } finally {
      first.child.kill('SIGTERM');
      await first.done;
    }
    // The first instance released its claim on the way out: the folder is free again.
    expect((await readdir(dir)).filter((n) => n.endsWith('.instance.json'))).toEqual([]);
  }, 240_000);
});

describe('emi serve on a port something else holds', () => {
  it('says so in one line naming --port, and leaves no claim behind', async () => {
    const dir = await tempDir('emi-port-held-');
    await mkdir(join(dir, 'site'));
    await writeFile(join(dir, 'site', 'index.html'), '<!doctype html><title>built</title>');
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const { port } = holder.address() as AddressInfo;
    try {
      const run = await runEmi(dir, [
        'serve',
        '--dir',
        'site',
        '--port',
        String(port),
        '--dev-facilitator-port',
        '0',
      ]);
      expect(run.code).not.toBe(0);
      expect(errorLines(run)).toEqual([
        `emi: port ${port} on 127.0.0.1 is already in use (by another program, or an emi serve or up of other ` +
          'folders): choose another with --port',
      ]);
    } finally {
      await new Promise((done) => holder.close(done));
    }
    expect((await readdir(dir)).filter((n) => n.endsWith('.instance.json'))).toEqual([]);
  }, 60_000);
});
