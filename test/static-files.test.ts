// How a URL path maps to a file of the built site: files, folders through their index page, a folder asked for
// without its trailing slash redirected to the slashed URL (query kept), and nothing outside the root.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveStaticFile, resolveStaticRequest } from '../generator/serve/static-files.ts';

let parent: string;
let root: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'emi-static-'));
  root = join(parent, 'dist');
  await mkdir(join(root, 'x402-buyer'), { recursive: true });
  await mkdir(join(root, 'docs', 'endpoints', 'main-brain'), { recursive: true });
  await mkdir(join(root, 'assets'), { recursive: true });
  await writeFile(join(root, 'index.html'), '<!doctype html><title>home</title>');
  await writeFile(join(root, 'x402-buyer', 'index.html'), '<!doctype html><title>buyer</title>');
  await writeFile(join(root, 'x402-buyer', 'app.js'), 'export {};');
  await writeFile(join(root, 'docs', 'endpoints', 'main-brain', 'index.html'), '<!doctype html>');
  await writeFile(join(parent, 'secret.txt'), 'outside the root');
});

afterAll(() => rm(parent, { recursive: true, force: true }));

describe('resolveStaticRequest', () => {
  it('redirects a folder asked for without its trailing slash to the slashed URL', async () => {
    expect(await resolveStaticRequest(root, '/x402-buyer')).toEqual({
      kind: 'redirect',
      location: '/x402-buyer/',
    });
    expect(await resolveStaticRequest(root, '/docs/endpoints/main-brain')).toEqual({
      kind: 'redirect',
      location: '/docs/endpoints/main-brain/',
    });
  });

  it('keeps the query string on the redirect, with or without its "?"', async () => {
    for (const search of ['?from=docs&x=1', 'from=docs&x=1']) {
      expect(await resolveStaticRequest(root, '/x402-buyer', search)).toEqual({
        kind: 'redirect',
        location: '/x402-buyer/?from=docs&x=1',
      });
    }
    expect(await resolveStaticRequest(root, '/x402-buyer', '?')).toEqual({
      kind: 'redirect',
      location: '/x402-buyer/',
    });
  });

  it('never redirects to another host: leading slashes collapse to one', async () => {
    expect(await resolveStaticRequest(root, '//x402-buyer')).toEqual({
      kind: 'redirect',
      location: '/x402-buyer/',
    });
  });

  it('serves the slashed folder through its index page, and files as they are', async () => {
    expect(await resolveStaticRequest(root, '/x402-buyer/', '?a=1')).toEqual({
      kind: 'file',
      file: join(root, 'x402-buyer', 'index.html'),
    });
    expect(await resolveStaticRequest(root, '/')).toEqual({ kind: 'file', file: join(root, 'index.html') });
    expect(await resolveStaticRequest(root, '/x402-buyer/app.js')).toEqual({
      kind: 'file',
      file: join(root, 'x402-buyer', 'app.js'),
    });
  });

  it('answers nothing for a folder without an index page, a missing path or a way out of the root', async () => {
    for (const path of [
      '/assets',
      '/assets/',
      '/nope',
      '/nope/',
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/%E0%A4%A',
    ]) {
      expect(await resolveStaticRequest(root, path), path).toBeNull();
    }
  });
});

describe('resolveStaticFile', () => {
  it('still names the index page of a folder, slashed or not', async () => {
    expect(await resolveStaticFile(root, '/x402-buyer/')).toBe(join(root, 'x402-buyer', 'index.html'));
    expect(await resolveStaticFile(root, '/x402-buyer')).toBe(join(root, 'x402-buyer', 'index.html'));
    expect(await resolveStaticFile(root, '/../secret.txt')).toBeNull();
  });
});
