// The third-party notices of a browser bundle. The site serves bundled npm packages to every reader (algosdk and
// others under MIT, which asks that its notice go with every copy; the wallet SDKs under Apache-2.0, which asks for
// a copy of the licence and any NOTICE file), so each program gets a licence file listing every package whose code
// went into its output, with the licence texts the package itself ships, and the Apache License itself when a
// package names it without shipping its text.

/** One npm package in a bundle: what it is called, which version, under what licence, and its licence files. */
export interface BundledPackage {
  name: string;
  version: string;
  /** The licence package.json names (`license`, or the old `licenses` array); null when it names none. */
  license: string | null;
  /** The package's own licence, notice and copying files (file name -> text), in name order; empty when it has none. */
  texts: Array<{ file: string; text: string }>;
}

/** Reads a package's files; both answer null when the file or folder is absent. */
export interface PackageReader {
  readFile(path: string): string | null;
  listDir(path: string): string[] | null;
}

/** The files a package ships its licence terms in (LICENSE.md, LICENCE, COPYING.txt, NOTICE, license-MIT...). */
const LICENSE_FILE = /^(licen[cs]e|copying|notice)/i;

/**
 * The package folder an input file belongs to: up to the last `node_modules/` segment and the package name after
 * it (two segments for a scoped name), so a copy nested inside another package counts as its own package. Null for
 * a file outside node_modules (the site's own code) and for esbuild's virtual inputs (`(disabled):…`).
 */
export function packageFolderOf(input: string): { folder: string; name: string } | null {
  if (/^\([a-z-]+\):/.test(input)) return null;
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return null;
  const scoped = parts[at + 1]?.startsWith('@') ?? false;
  const nameParts = parts.slice(at + 1, at + (scoped ? 3 : 2));
  // The folder needs its name and at least one file below it.
  if (nameParts.length !== (scoped ? 2 : 1) || parts.length <= at + nameParts.length + 1) return null;
  return { folder: parts.slice(0, at + 1 + nameParts.length).join('/'), name: nameParts.join('/') };
}

interface PackageJson {
  version?: unknown;
  license?: unknown;
  licenses?: unknown;
}

/** `license` as a string (SPDX expression) or the old `{ type }` object; the old `licenses` array joined by OR. */
function licenseOf(manifest: PackageJson): string | null {
  const typeOf = (entry: unknown): string | null =>
    typeof entry === 'string'
      ? entry
      : typeof (entry as { type?: unknown } | null)?.type === 'string'
        ? (entry as { type: string }).type
        : null;
  const single = typeOf(manifest.license);
  if (single) return single;
  if (!Array.isArray(manifest.licenses)) return null;
  const types = manifest.licenses.map(typeOf).filter((type): type is string => type !== null);
  return types.length > 0 ? types.join(' OR ') : null;
}

function readManifest(reader: PackageReader, folder: string): PackageJson {
  const text = reader.readFile(`${folder}/package.json`);
  try {
    const parsed: unknown = text === null ? null : JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? (parsed as PackageJson) : {};
  } catch {
    return {};
  }
}

/**
 * Every npm package some of the `inputs` (esbuild metafile input paths, or files) belong to, with its version,
 * licence and licence files: one entry per name@version (the same version nested twice is listed once), sorted by
 * name, then version.
 */
export function bundledPackages(inputs: Iterable<string>, reader: PackageReader): BundledPackage[] {
  const folders = new Map<string, string>();
  for (const input of inputs) {
    const found = packageFolderOf(input);
    if (found && !folders.has(found.folder)) folders.set(found.folder, found.name);
  }
  const byId = new Map<string, BundledPackage>();
  for (const [folder, name] of [...folders].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const manifest = readManifest(reader, folder);
    const version = typeof manifest.version === 'string' ? manifest.version : 'unknown';
    const id = `${name}@${version}`;
    if (byId.has(id)) continue;
    const texts = (reader.listDir(folder) ?? [])
      .filter((file) => LICENSE_FILE.test(file))
      .sort()
      .flatMap((file) => {
        const text = reader.readFile(`${folder}/${file}`);
        return text === null ? [] : [{ file, text }];
      });
    byId.set(id, { name, version, license: licenseOf(manifest), texts });
  }
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...byId.values()].sort((a, b) => compare(a.name, b.name) || compare(a.version, b.version));
}

const RULE = '='.repeat(78);

/** Whether a package names the Apache License 2.0 but ships no copy of it (some ship only a NOTICE, or nothing). */
const needsApacheText = (pkg: BundledPackage): boolean =>
  /\bApache-2\.0\b/.test(pkg.license ?? '') && !pkg.texts.some(({ text }) => text.includes('Apache License'));

/**
 * A program's licence file: a header line, then each package under a rule with its texts, then the Apache License
 * 2.0 (`apacheText`) once if a package names it without shipping it.
 */
export function renderLicenses(
  program: string,
  packages: readonly BundledPackage[],
  apacheText: string,
): string {
  const lines = [
    `Third-party software in ${program}: ${packages.length} npm package(s), each with the licence files it ships.`,
    'Generated by generator/buyer/bundle.ts from the bundle itself (esbuild metafile) at every bundle: do not edit.',
    "Notices kept in the packages' source files (/*! ... */, @license) are at the end of each script that holds them.",
  ];
  for (const pkg of packages) {
    lines.push('', RULE, `${pkg.name} ${pkg.version} (${pkg.license ?? 'no licence named'})`, RULE, '');
    if (pkg.texts.length === 0) {
      lines.push(
        `The package ships no licence file; its package.json names the licence: ${pkg.license ?? 'none'}.`,
      );
    }
    for (const { file, text } of pkg.texts) lines.push(`--- ${file} ---`, '', text.trimEnd(), '');
  }
  const apache = packages.filter(needsApacheText).map((pkg) => pkg.name);
  if (apache.length > 0) {
    lines.push(
      '',
      RULE,
      `The Apache License 2.0, named by ${apache.join(', ')}`,
      RULE,
      '',
      apacheText.trimEnd(),
    );
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
