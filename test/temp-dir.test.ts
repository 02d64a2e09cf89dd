// test/helpers/temp-dir.ts: a folder made in a test goes when the test ends; one made for the file, or outside a
// test, stays for the file's later tests (and goes after them: the tmp guard fails the run otherwise).
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir, tempDirSync } from './helpers/temp-dir.ts';

describe('temporary folders', () => {
  let forTheTest = '';
  let forTheTestSync = '';
  let forTheFile = '';
  let outsideATest = '';

  beforeAll(async () => {
    outsideATest = await tempDir('emi-temp-dir-outside-');
  });

  it('are made in the temp folder under the prefix', async () => {
    forTheTest = await tempDir('emi-temp-dir-test-');
    forTheTestSync = tempDirSync('emi-temp-dir-sync-');
    forTheFile = await tempDir('emi-temp-dir-file-', 'file');
    expect(dirname(forTheTest)).toBe(tmpdir());
    expect(basename(forTheTest)).toMatch(/^emi-temp-dir-test-[A-Za-z0-9]{6}$/);
    // A folder the test made read-only inside is removed too.
    await mkdir(join(forTheTest, 'locked'));
    await writeFile(join(forTheTest, 'locked', 'file'), 'x');
    await chmod(join(forTheTest, 'locked'), 0o555);
    expect(existsSync(forTheTestSync)).toBe(true);
  });

  it('made in a test are gone once it ended; made for the file or outside a test, they stay', () => {
    expect(existsSync(forTheTest)).toBe(false);
    expect(existsSync(forTheTestSync)).toBe(false);
    expect(existsSync(forTheFile)).toBe(true);
    expect(existsSync(outsideATest)).toBe(true);
  });
});
