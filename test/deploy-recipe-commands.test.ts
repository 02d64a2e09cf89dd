// The emi commands the deploy recipes run (the systemd units, the scheduled CI workflow), run as written from a
// working directory of their own, on the simulated market instead of the live venues (tests never reach the
// internet): a renamed option, or one that only works from the checkout's own folder, fails here.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const EMI = join(ROOT, 'bin', 'emi.js');
const BASE_URL = 'https://emi.example.org';

/** The arguments of every one-shot `node bin/emi.js ...` line of a recipe (the paywall is a service, not a step). */
function emiSteps(text: string, prefix: RegExp): string[][] {
  return text
    .split('\n')
    .map((line) => prefix.exec(line)?.[1])
    .filter((command): command is string => command !== undefined)
    .map((command) =>
      command
        .replaceAll('${{ vars.EMI_BASE_URL }}', BASE_URL)
        .split(/\s+/)
        .map((arg, i, all) => (all[i - 1] === '--source' && arg === 'live' ? 'sim' : arg)),
    )
    .filter(([name]) => name !== 'paywall');
}

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function runSteps(steps: string[][]): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'emi-recipe-'));
  for (const args of steps) {
    await run(process.execPath, [EMI, ...args], {
      cwd: dir,
      env: { ...process.env, EMI_BASE_URL: BASE_URL, NODE_ENV: 'production' },
    });
  }
  return dir;
}

describe('the commands of the deploy recipes, run as written from a folder of their own', () => {
  it('the systemd generate service publishes and builds the site', async () => {
    const unit = await readFile(join(ROOT, 'deploy/systemd/emi-generate.service'), 'utf8');
    const steps = emiSteps(unit, /^ExecStart=\/usr\/bin\/node bin\/emi\.js (.+)$/);
    // One command: a second ExecStart (a build) would not run after a failed generate, and the served
    // /status.json would go on saying the last good run's `ok` (test/status-served.test.ts).
    expect(steps).toHaveLength(1);
    expect(steps[0]?.[0]).toBe('generate');
    expect(steps[0]).toContain('--dist');
    const cwd = await runSteps(steps);
    expect((await stat(join(cwd, 'dist', 'index.html'))).isFile()).toBe(true);
    expect(await readFile(join(cwd, 'dist', 'api', 'main-brain.php'), 'utf8')).toContain('"simulated"');
    // The discovery files come from ES module templates, rendered alike from any working directory.
    const openapi = JSON.parse(await readFile(join(cwd, 'dist', 'openapi.json'), 'utf8')) as {
      openapi: string;
    };
    expect(openapi.openapi).toBe('3.1.0');
    expect(await readFile(join(cwd, 'dist', 'robots.txt'), 'utf8')).toContain(
      `Sitemap: ${BASE_URL}/sitemap.xml`,
    );
  });

  it('the scheduled CI workflow generates, validates and builds the site', async () => {
    const workflow = await readFile(join(ROOT, 'deploy/ci/github-actions-schedule.yml'), 'utf8');
    const steps = emiSteps(workflow, /^\s*- run: node bin\/emi\.js (.+)$/);
    expect(steps.map(([name]) => name)).toEqual(['generate', 'validate']);
    expect(steps[0]).toContain('--dist');
    // The run says the schedule's interval, so its files read late only when a run is late, never stale between
    // runs; the paywall selling them is told to accept twice that age.
    const minutes = Number(/cron: '\*\/(\d+) \* \* \* \*'/.exec(workflow)?.[1]);
    expect(steps[0]?.join(' ')).toContain(`--cadence ${minutes * 60}`);
    expect(workflow).toContain(`EMI_MAX_DATA_AGE_SECONDS=${minutes * 120}`);
    // The steps after the run still deploy after a failed one (the job still fails): its status is served.
    const afterRun = workflow.slice(workflow.indexOf('id: generate'));
    const guarded = afterRun.match(/^\s*- run: /gm) ?? [];
    const conditions =
      afterRun.match(/^\s*if: \$\{\{ !cancelled\(\) && steps\.generate\.outcome != 'skipped' \}\}$/gm) ?? [];
    expect(conditions.length).toBe(guarded.length);
    const cwd = await runSteps(steps);
    expect((await stat(join(cwd, 'dist', 'index.html'))).isFile()).toBe(true);
    expect(await readFile(join(cwd, 'dist', 'sitemap.xml'), 'utf8')).toContain(BASE_URL);
  });
});

describe('the nginx recipe and the systemd units agree on who runs emi', () => {
  it('the recipe creates the units’ user, gives it their working folder, and runs its steps as that user', async () => {
    const readme = await readFile(join(ROOT, 'deploy/README.md'), 'utf8');
    const recipe = /## nginx \(Debian\)[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    for (const name of ['emi-generate.service', 'emi-paywall.service']) {
      const unit = await readFile(join(ROOT, 'deploy/systemd', name), 'utf8');
      const user = /^User=(.+)$/m.exec(unit)?.[1];
      const folder = /^WorkingDirectory=(.+)$/m.exec(unit)?.[1];
      expect(user, name).toBeDefined();
      expect(recipe).toMatch(new RegExp(`^useradd .*\\b${user}$`, 'm'));
      expect(recipe).toContain(`chown -R ${user}:${user} ${folder}`);
      // Every emi and npm step runs as that user: a root-owned file in the folder would stop the units.
      const steps = recipe.split('\n').filter((line) => /\b(npm|npx)\b/.test(line) && !/^apt-get/.test(line));
      expect(steps.length).toBeGreaterThanOrEqual(4);
      for (const step of steps) expect(step, step).toMatch(new RegExp(`^sudo -u ${user} `));
    }
    // The worker's writable state folder exists before the units start: the first generate comes first.
    expect(recipe.indexOf('emi generate')).toBeLessThan(recipe.indexOf('systemctl enable'));
  });
});

describe('deploy/README’s commands paste as written', () => {
  const SUBCOMMANDS =
    /^(generate|build|publisher|serve|up|paywall|schedule|buy|validate|mcp|arena|sources|backfill)$/;

  it('runs emi through npx: `npm ci` puts no emi on the PATH', async () => {
    const readme = await readFile(join(ROOT, 'deploy/README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const bare: string[] = [];
    for (const line of blocks.join('\n').split('\n')) {
      const tokens = line
        .replace(/\s#\s.*$/, '')
        .trim()
        .split(/\s+/);
      tokens.forEach((token, i) => {
        if (token === 'emi' && SUBCOMMANDS.test(tokens[i + 1] ?? '') && tokens[i - 1] !== 'npx')
          bare.push(line.trim());
      });
    }
    expect(bare).toEqual([]);
  });

  it('the nginx recipe fills the payee and the public origin in before the build and before enabling the units', async () => {
    const readme = await readFile(join(ROOT, 'deploy/README.md'), 'utf8');
    const recipe = /## nginx \(Debian\)[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const filled = recipe.search(/EMI_PAYTO=\S+.*\/etc\/emi\/paywall\.env/);
    expect(filled).toBeGreaterThan(-1);
    expect(filled).toBeLessThan(recipe.indexOf('systemctl enable'));
    // The build writes the buyer page's config.json from EMI_PAYTO: the first one and the timer's alike.
    const build = recipe.split('\n').find((line) => /npx emi build/.test(line)) ?? '';
    expect(build).toMatch(/EMI_PAYTO/);
    expect(filled).toBeLessThan(recipe.indexOf(build));
    // The units' EMI_BASE_URL is a placeholder: the file the units read gives the real origin, and the first build
    // uses the same one (else the timer's next build publishes every URL at the placeholder's host).
    expect(recipe).toMatch(/EMI_BASE_URL=\S+.*\/etc\/emi\/paywall\.env/);
    expect(build).toMatch(/--preserve-env=\S*EMI_BASE_URL/);
    for (const name of ['emi-generate.service', 'emi-paywall.service']) {
      const unit = await readFile(join(ROOT, 'deploy/systemd', name), 'utf8');
      expect(unit, name).toMatch(/^EnvironmentFile=-?\/etc\/emi\/paywall\.env$/m);
    }
  });
});

describe('the CI schedule template', () => {
  it('names in its header every repository variable and secret it reads', async () => {
    const template = await readFile(join(ROOT, 'deploy/ci/github-actions-schedule.yml'), 'utf8');
    const comments = template
      .slice(0, template.indexOf('    steps:'))
      .split('\n')
      .filter((line) => line.trim().startsWith('#'))
      .join('\n');
    const used = new Set([...template.matchAll(/\$\{\{ (?:vars|secrets)\.(\w+) \}\}/g)].map((m) => m[1]!));
    expect([...used]).toEqual(expect.arrayContaining(['EMI_BASE_URL', 'EMI_PAYTO', 'PAYWALL_ORIGIN']));
    for (const name of used) expect(comments, name).toContain(name);
  });
});
