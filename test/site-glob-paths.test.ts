// Eleventy reads every path it is given as a glob: a checkout under a folder named like `sites (old)` built a site
// with no pages, in silence. emi hands it paths relative to the working directory, and refuses one that would still
// hold glob syntax.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyTemplates } from './site-fixture.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const EMI = join(ROOT, 'bin', 'emi.js');
const BASE_URL = 'https://emi.example.org';

let outer: string;
let project: string;
beforeAll(async () => {
  outer = await mkdtemp(join(tmpdir(), 'emi-glob-'));
  project = join(outer, 'sites (old)');
  await mkdir(join(project, 'site'), { recursive: true });
  await copyTemplates(join(project, 'site'));
  // The templates find their packages (the API reference's bundle) from where they are, as in a checkout.
  await symlink(join(ROOT, 'node_modules'), join(project, 'node_modules'));
  await run(process.execPath, [EMI, 'generate', '--out', 'published', '--paid', 'paid', '--state', 'var'], {
    cwd: project,
  });
});
afterAll(async () => {
  await rm(outer, { recursive: true, force: true });
});

const build = (cwd: string, out: string) =>
  run(
    process.execPath,
    [EMI, 'build', '--site', join(project, 'site'), '--published', join(project, 'published'), '--out', out],
    { cwd, env: { ...process.env, EMI_BASE_URL: BASE_URL } },
  );

describe('a site whose folders sit under a path holding glob syntax', () => {
  it('builds every page when emi runs from the project folder', async () => {
    await build(project, 'dist');
    const dist = join(project, 'dist');
    expect((await stat(join(dist, 'docs', 'api', 'index.html'))).isFile()).toBe(true);
    expect(await readFile(join(dist, 'robots.txt'), 'utf8')).toContain(`Sitemap: ${BASE_URL}/sitemap.xml`);
    expect(await readFile(join(dist, 'index.html'), 'utf8')).toContain('simulated');
  });

  it('is refused with the reason when the way from the working directory holds it, never built empty', async () => {
    const failure = await build(outer, join(outer, 'dist')).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain('Eleventy reads sites (old)/site');
    expect(failure?.stderr).toContain('as a glob');
    expect(failure?.stderr).toContain(`run emi from ${project} or a folder inside it`);
    await expect(stat(join(outer, 'dist', 'index.html'))).rejects.toThrow();
  });
});

describe('a checkout whose path holds # or %, which Eleventy 3.1 reads as URL syntax', () => {
  for (const folder of ['a#1', 'b%20']) {
    it(`is refused in one line, exit 2, before anything is written (${folder})`, async () => {
      const site = join(outer, folder, 'site');
      await mkdir(site, { recursive: true });
      await copyTemplates(site);
      const out = join(outer, folder, 'dist');
      const failure = await run(
        process.execPath,
        [EMI, 'build', '--site', site, '--published', join(project, 'published'), '--out', out],
        { cwd: join(outer, folder), env: { ...process.env, EMI_BASE_URL: BASE_URL } },
      ).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).toBe(2);
      expect(failure?.stderr.trim().split('\n')).toHaveLength(1);
      expect(failure?.stderr).toContain(`Eleventy cannot load the site templates from ${site}`);
      expect(failure?.stderr).toContain('move or rename the folder');
      await expect(stat(out)).rejects.toThrow();
      await expect(stat(join(outer, folder, '.dist.generations'))).rejects.toThrow();
    });
  }

  it('emi up from such a checkout refuses at its start, before its first run (it builds at every cycle)', async () => {
    const checkout = join(outer, 'c#1');
    await mkdir(checkout, { recursive: true });
    for (const part of ['bin', 'build', 'site', 'package.json']) {
      await cp(join(ROOT, part), join(checkout, part), { recursive: true });
    }
    await symlink(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    const failure = await run(
      process.execPath,
      [
        join(checkout, 'bin', 'emi.js'),
        'up',
        '--port',
        '0',
        '--dev-facilitator-port',
        '0',
        '--backfill-days',
        '0',
      ],
      { cwd: checkout },
    ).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    const lines = failure?.stderr
      .trim()
      .split('\n')
      .filter((line) => !line.includes('build/ is out of date'));
    expect(lines).toEqual([
      expect.stringContaining(`Eleventy cannot load the site templates from ${checkout}/site`),
    ]);
    for (const written of ['var', 'dist', '.dist.instance.json']) {
      await expect(stat(join(checkout, written))).rejects.toThrow();
    }
  });

  it('builds when the templates are given through a link without them, from a folder without them', async () => {
    const site = join(outer, 'c#3', 'site');
    await mkdir(site, { recursive: true });
    await copyTemplates(site);
    await symlink(join(ROOT, 'node_modules'), join(outer, 'c#3', 'node_modules'));
    await symlink(join(outer, 'c#3'), join(outer, 'plain-link'));
    await symlink(project, join(outer, 'project-link')); // its own name holds glob syntax
    await run(
      process.execPath,
      [EMI, 'build', '--site', 'plain-link/site', '--published', 'project-link/published', '--out', 'linked'],
      { cwd: outer, env: { ...process.env, EMI_BASE_URL: BASE_URL } },
    );
    expect((await stat(site)).isDirectory()).toBe(true);
    expect(await readFile(join(outer, 'linked', 'robots.txt'), 'utf8')).toContain(`Sitemap: ${BASE_URL}/`);
  });
});

describe('a published folder under a path holding glob syntax', () => {
  it('builds when emi runs from inside the folder the refusal names', async () => {
    await build(project, join(project, 'dist-from-inside'));
    expect((await stat(join(project, 'dist-from-inside', 'index.html'))).isFile()).toBe(true);
  });
});
