// The third-party licences of the code the site serves to browsers (generator/buyer/licenses.ts, bundle.ts): each
// program gets a licence file in assets/licenses/ with every npm package bundled into it, the licence texts it
// ships and the Apache License where a package names it without a copy, written with the bundle, served as
// text/plain, linked from the pages that load the programs, and never in the chunk folders hosts cache for a year.
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { build } from 'esbuild';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleSitePrograms } from '../generator/buyer/bundle.ts';
import { isCurrent, writeStamp } from '../generator/buyer/bundle-stamp.ts';
import { bundledPackages, packageFolderOf, renderLicenses } from '../generator/buyer/licenses.ts';
import type { BundledPackage, PackageReader } from '../generator/buyer/licenses.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';
import { copyTemplates, FIRST_RUN, publishSimulatedRuns, TEST_BASE_URL } from './site-fixture.ts';

/** A stand-in for the licence text (the real one is generator/buyer/licence-texts/Apache-2.0.txt). */
const APACHE = 'Apache License\n  Version 2.0, January 2004\n  (terms)\n';

/** A made-up node_modules: path -> text, folders listed from it. */
function fakeReader(files: Record<string, string>): PackageReader {
  return {
    readFile: (path) => files[path] ?? null,
    listDir: (dir) => {
      const names = Object.keys(files)
        .filter((path) => path.startsWith(`${dir}/`))
        .map((path) => path.slice(dir.length + 1).split('/')[0]!);
      return names.length > 0 ? [...new Set(names)] : null;
    },
  };
}

const manifest = (fields: Record<string, unknown>) => JSON.stringify(fields);

describe('bundledPackages', () => {
  const files = {
    'node_modules/algosdk/package.json': manifest({ name: 'algosdk', version: '3.8.0', license: 'MIT' }),
    'node_modules/algosdk/LICENSE': 'MIT License\nCopyright (c) Algorand\n',
    'node_modules/algosdk/dist/esm/main.js': '',
    'node_modules/@x402/core/package.json': manifest({ version: '2.26.0', license: 'Apache-2.0' }),
    'node_modules/@x402/core/NOTICE': 'x402 notice\n',
    'node_modules/@x402/core/LICENSE.md': 'Apache License 2.0\n',
    'node_modules/@x402/core/dist/index.mjs': '',
    // No licence file, and the old `licenses` array.
    'node_modules/old-lib/package.json': manifest({
      version: '0.1.0',
      licenses: [{ type: 'MIT' }, { type: 'GPL-2.0' }],
    }),
    'node_modules/old-lib/index.js': '',
    // The same package nested twice: once at another version (listed), once at the same version (not again).
    'node_modules/@perawallet/connect/package.json': manifest({ version: '1.4.1', license: 'Apache-2.0' }),
    'node_modules/@perawallet/connect/dist/index.js': '',
    'node_modules/@perawallet/connect/node_modules/bn.js/package.json': manifest({
      version: '4.12.0',
      license: 'MIT',
    }),
    'node_modules/@perawallet/connect/node_modules/bn.js/LICENCE': 'bn 4 licence\n',
    'node_modules/@perawallet/connect/node_modules/bn.js/lib/bn.js': '',
    'node_modules/bn.js/package.json': manifest({ version: '5.2.1', license: 'MIT' }),
    'node_modules/bn.js/COPYING': 'bn 5 licence\n',
    'node_modules/bn.js/lib/bn.js': '',
    'node_modules/other/node_modules/bn.js/package.json': manifest({ version: '5.2.1', license: 'MIT' }),
    'node_modules/other/node_modules/bn.js/lib/bn.js': '',
  };
  const inputs = [
    'site/x402-buyer/src/main.ts',
    'node_modules/old-lib/index.js',
    'node_modules/bn.js/lib/bn.js',
    'node_modules/@x402/core/dist/index.mjs',
    'node_modules/algosdk/dist/esm/main.js',
    'node_modules/algosdk/dist/esm/main.js',
    'node_modules/@perawallet/connect/dist/index.js',
    'node_modules/@perawallet/connect/node_modules/bn.js/lib/bn.js',
    'node_modules/other/node_modules/bn.js/lib/bn.js',
    '(disabled):node_modules/crypto-browserify/index.js',
  ];
  const packages = bundledPackages(inputs, fakeReader(files));

  it('lists each bundled package once by name@version, sorted by name, scoped and nested ones too', () => {
    expect(packages.map((p) => `${p.name}@${p.version}`)).toEqual([
      '@perawallet/connect@1.4.1',
      '@x402/core@2.26.0',
      'algosdk@3.8.0',
      'bn.js@4.12.0',
      'bn.js@5.2.1',
      'old-lib@0.1.0',
    ]);
  });

  it('reads the licence from `license` or the old `licenses` array, and the licence, notice and copying files', () => {
    const byId = new Map(packages.map((p) => [`${p.name}@${p.version}`, p]));
    expect(byId.get('algosdk@3.8.0')).toMatchObject({
      license: 'MIT',
      texts: [{ file: 'LICENSE', text: 'MIT License\nCopyright (c) Algorand\n' }],
    });
    expect(byId.get('@x402/core@2.26.0')?.texts.map((t) => t.file)).toEqual(['LICENSE.md', 'NOTICE']);
    expect(byId.get('bn.js@4.12.0')?.texts).toEqual([{ file: 'LICENCE', text: 'bn 4 licence\n' }]);
    expect(byId.get('bn.js@5.2.1')?.texts).toEqual([{ file: 'COPYING', text: 'bn 5 licence\n' }]);
    expect(byId.get('old-lib@0.1.0')).toMatchObject({ license: 'MIT OR GPL-2.0', texts: [] });
  });

  it('says so for a package without a licence file, with the licence its package.json names', () => {
    const text = renderLicenses('the test program', packages, APACHE);
    expect(text.split('\n')[0]).toMatch(/^Third-party software in the test program: 6 npm package/);
    expect(text).toContain('old-lib 0.1.0 (MIT OR GPL-2.0)');
    expect(text).toContain(
      'The package ships no licence file; its package.json names the licence: MIT OR GPL-2.0.',
    );
    expect(text).toContain('@x402/core 2.26.0 (Apache-2.0)\n');
    expect(text).toContain('--- NOTICE ---\n\nx402 notice\n');
  });

  it('appends the Apache License once, naming the packages that name it without shipping its text', () => {
    const apache = (name: string, texts: BundledPackage['texts']): BundledPackage => ({
      name,
      version: '1.0.0',
      license: 'Apache-2.0',
      texts,
    });
    const notice = [{ file: 'NOTICE', text: 'a notice\n' }];
    const copy = [{ file: 'LICENSE', text: `${APACHE}\n` }];
    const text = renderLicenses('p', [apache('a', []), apache('b', notice), apache('c', copy)], APACHE);
    expect(text).toContain(
      `The Apache License 2.0, named by a, b\n${'='.repeat(78)}\n\n${APACHE.trimEnd()}\n`,
    );
    expect(text.split('Apache License\n  Version 2.0').length - 1).toBe(2); // c's own copy, and the one appended
    // None is appended when every Apache package ships the licence, or none names it.
    expect(renderLicenses('p', [apache('c', copy)], APACHE)).not.toContain(
      'The Apache License 2.0, named by',
    );
    expect(
      renderLicenses(
        'p',
        packages.filter((p) => p.license === 'MIT'),
        APACHE,
      ),
    ).not.toContain('The Apache License 2.0');
  });

  it('finds the package folder of an input, and none for the site’s own files', () => {
    expect(packageFolderOf('node_modules/@scope/pkg/a/b.js')).toEqual({
      folder: 'node_modules/@scope/pkg',
      name: '@scope/pkg',
    });
    expect(packageFolderOf('../node_modules/a/node_modules/@s/b/x.js')).toEqual({
      folder: '../node_modules/a/node_modules/@s/b',
      name: '@s/b',
    });
    expect(packageFolderOf('site/x402-buyer/src/main.ts')).toBeNull();
    expect(packageFolderOf('(disabled):node_modules/x/y.js')).toBeNull();
  });
});

describe('the stamp of a bundle', () => {
  it('counts the package files the licence file was read from as inputs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-licenses-stamp-'));
    try {
      await writeFile(join(dir, 'main.js'), 'console.log(1);\n');
      const licence = join(dir, 'LICENSE');
      await writeFile(licence, 'MIT\n');
      const result = await build({
        entryPoints: [join(dir, 'main.js')],
        outfile: join(dir, 'out.js'),
        metafile: true,
        absWorkingDir: dir,
        logLevel: 'silent',
      });
      const stamp = join(dir, 'stamp.json');
      await writeStamp(stamp, 'k', result.metafile, dir, [licence]);
      expect(await isCurrent(stamp, 'k')).toBe(true);
      await writeFile(licence, 'MIT, changed\n');
      expect(await isCurrent(stamp, 'k')).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the licence files of the built site', () => {
  let root: string;
  let site: string;
  let dist: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-licenses-'));
    site = join(root, 'site');
    dist = join(root, 'dist');
    await mkdir(join(site, 'x402-buyer'), { recursive: true });
    await copyTemplates(site);
    // The buyer page itself (the fixture leaves the generated x402-buyer/ folder out): `emi build` bundles it.
    for (const file of ['index.html', 'buyer.css'])
      await cp(join('site/x402-buyer', file), join(site, 'x402-buyer', file));
    await publishSimulatedRuns(root, [FIRST_RUN]);
    await emiInProcess([
      'build',
      '--site',
      site,
      '--published',
      site,
      '--out',
      dist,
      '--base-url',
      TEST_BASE_URL,
    ]);
  }, 240_000);
  afterAll(() => rm(root, { recursive: true, force: true }));

  const BUYER_LICENSES = '/assets/licenses/x402-buyer.txt';
  const VOTE_LICENSES = '/assets/licenses/arena-vote.txt';

  /** A package's version as installed. */
  const versionOf = async (name: string) =>
    (JSON.parse(await readFile(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;

  it('lists algosdk with its MIT text and the Apache-2.0 wallet code with its NOTICE for the buyer page', async () => {
    const text = await readFile(join(dist, BUYER_LICENSES), 'utf8');
    expect(text.split('\n')[0]).toMatch(/^Third-party software in the buyer page/);
    expect(text).toContain(`\nalgosdk ${await versionOf('algosdk')} (MIT)\n`);
    expect(text).toContain((await readFile('node_modules/algosdk/LICENSE', 'utf8')).trimEnd());
    const pera = `@perawallet/walletconnect ${await versionOf('@perawallet/walletconnect')} (Apache-2.0)`;
    expect(text).toContain(`\n${pera}\n`);
    expect(text).toContain(
      (await readFile('node_modules/@perawallet/walletconnect/NOTICE', 'utf8')).trimEnd(),
    );
    // Apache-2.0 without a licence file in the package: the entry says so.
    expect(text).toContain(
      `@walletconnect/core ${await versionOf('@walletconnect/core')} (Apache-2.0)\n${'='.repeat(78)}\n\n` +
        'The package ships no licence file; its package.json names the licence: Apache-2.0.',
    );
    // ...and the licence itself follows once, the real text.
    const apache = (await readFile('generator/buyer/licence-texts/Apache-2.0.txt', 'utf8')).trimEnd();
    expect(text).toMatch(/\nThe Apache License 2\.0, named by .*@walletconnect\/core/);
    expect(text.endsWith(`${apache}\n`)).toBe(true);
    // The page builds its payment with algosdk (README "Group built with algosdk"): no @x402 package ships to it.
    expect(text).not.toContain('@x402/');
    // Only packages: the site's own sources are not third-party.
    expect(text).not.toContain('x402-buyer/src');
  });

  it('keeps the notices of the bundled source files with the code (lottie-web’s “header required”)', async () => {
    const folder = join(dist, 'assets/x402-buyer');
    const scripts = (await readdir(folder)).filter((file) => file.endsWith('.js'));
    const texts = await Promise.all(scripts.map((file) => readFile(join(folder, file), 'utf8')));
    expect(texts.filter((text) => text.includes('Bundled license information')).length).toBeGreaterThan(0);
    expect(texts.some((text) => text.includes('License: MIT, header required.'))).toBe(true);
    // None in the code the page loads first.
    expect(await readFile(join(dist, 'x402-buyer/app.js'), 'utf8')).not.toContain(
      'Bundled license information',
    );
  });

  it('lists the vote form’s packages beside its script', async () => {
    const text = await readFile(join(dist, VOTE_LICENSES), 'utf8');
    expect(text.split('\n')[0]).toMatch(/^Third-party software in the arena vote form/);
    expect(text).toMatch(/\nalgosdk \S+ \(MIT\)\n/);
  });

  it('serves both as text/plain', async () => {
    const app = createPreviewApp({ root: dist });
    for (const path of [BUYER_LICENSES, VOTE_LICENSES]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toBe('text/plain; charset=utf-8');
      expect(await response.text(), path).toMatch(/^Third-party software in /);
    }
  });

  it('links them from the buyer page’s footer and the vote form', async () => {
    const buyer = await readFile(join(dist, 'x402-buyer/index.html'), 'utf8');
    const footer = /<footer[\s\S]*<\/footer>/.exec(buyer)?.[0] ?? '';
    expect(footer).toContain(`href="${BUYER_LICENSES}"`);
    const rules = await readFile(join(dist, 'docs/arena-rules/index.html'), 'utf8');
    expect(rules).toContain(`href="${VOTE_LICENSES}"`);
  });

  it('keeps the chunk folders, which hosts cache for a year, to chunks and entry scripts', async () => {
    for (const folder of ['assets/x402-buyer', 'assets/arena-vote']) {
      const files = await readdir(join(dist, folder));
      expect(
        files.filter((file) => !file.endsWith('.js')),
        folder,
      ).toEqual([]);
    }
  });

  it('writes a missing licence file again although the bundle is current, and leaves a present one', async () => {
    const buyer = join(site, BUYER_LICENSES);
    const vote = join(site, VOTE_LICENSES);
    const voteBefore = (await stat(vote)).mtimeMs;
    await rm(buyer);
    await bundleSitePrograms(site);
    expect(await readFile(buyer, 'utf8')).toMatch(/\nalgosdk \S+ \(MIT\)\n/);
    expect((await stat(vote)).mtimeMs).toBe(voteBefore);
  }, 120_000);
});
