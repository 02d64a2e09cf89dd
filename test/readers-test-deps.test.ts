// The pretest check of `npm test`: quiet when chromium and nginx are there, one line naming what to install
// when they are not (installing through apt-get is turned off here, as it would change the machine).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const check = (env: Record<string, string>) =>
  spawnSync('bash', ['scripts/ensure-test-deps.sh'], {
    env: { ...process.env, EMI_APT_INSTALL: '0', ...env },
    encoding: 'utf8',
  });

describe('scripts/ensure-test-deps.sh', () => {
  it('stops at once with one line naming what is missing', () => {
    const run = check({ EMI_CHROMIUM_PATH: '/nonexistent/chromium', EMI_NGINX_PATH: '/nonexistent/nginx' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('apt-get install -y chromium nginx');
  });

  it('names only what is missing', () => {
    const run = check({ EMI_CHROMIUM_PATH: process.execPath, EMI_NGINX_PATH: '/nonexistent/nginx' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('npm test needs nginx:');
  });

  it('passes silently when both are there, and can be skipped', () => {
    const present = check({ EMI_CHROMIUM_PATH: process.execPath, EMI_NGINX_PATH: process.execPath });
    expect([present.status, present.stderr]).toEqual([0, '']);
    const skipped = check({ EMI_CHROMIUM_PATH: '/nonexistent', EMI_SKIP_SYSTEM_DEPS: '1' });
    expect(skipped.status).toBe(0);
  });
});
