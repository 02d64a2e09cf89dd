// emi refuses, in one line, a Node older than the one it needs (package.json `engines`): Debian 12's own nodejs is
// Node 18, on which a command would otherwise fail deep inside with an error that names nothing useful.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIN_NODE, nodeTooOld } from '../bin/node-version.js';

const ROOT = join(import.meta.dirname, '..');

describe('the Node version check', () => {
  it('is the version package.json declares in engines', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(manifest.engines.node).toBe(`>=${MIN_NODE.replace(/\.0$/, '')}`);
  });

  it('refuses Node 18 (Debian 12) and 20 before 20.19, in one line naming both versions', () => {
    for (const old of ['18.19.0', '20.18.3', '19.9.0', '8.17.0']) {
      const message = nodeTooOld(old);
      expect(message, old).toMatch(new RegExp(`needs Node ${MIN_NODE} or newer, and this is Node ${old}`));
      expect(message).toContain('deploy/README.md');
      expect(message).not.toContain('\n');
    }
  });

  it('accepts 20.19 and every later version', () => {
    for (const version of ['20.19.0', '20.20.2', '21.0.0', '22.12.0', '24.1.0', '100.0.0']) {
      expect(nodeTooOld(version), version).toBeNull();
    }
    expect(nodeTooOld()).toBeNull(); // the Node running this test
  });
});

describe('the launchers on an older Node', () => {
  // This Node made to report 18.19.0 before the launcher runs: what it then does is what Node 18 would see.
  const asNode18 = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'18.19.0'})`;
  const launch = (script: string, ...args: string[]) =>
    spawnSync(process.execPath, ['--import', asNode18, join(ROOT, 'bin', script), ...args], {
      encoding: 'utf8',
      cwd: ROOT,
    });

  it('emi exits 1 with the one line, before loading the CLI (also for --version)', () => {
    for (const args of [['generate'], ['--version']]) {
      const run = launch('emi.js', ...args);
      expect(run.status, args.join(' ')).toBe(1);
      expect(run.stderr.trim()).toBe(nodeTooOld('18.19.0'));
      expect(run.stdout).toBe('');
    }
  });

  it("the prepare step (npm ci's build) stops the install with the same line, compiling nothing", () => {
    const run = launch('build.js');
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(nodeTooOld('18.19.0'));
  });
});
