// routedPath reads a request's path from its URL string (as Hono's getPath does, for speed): it must give what the
// URL parser gives, normalised, for every shape of URL a host hands on.
import { describe, expect, it } from 'vitest';
import { normalisePath, routedPath } from '../schemas/delivery.ts';

const URLS = [
  'http://127.0.0.1:8080/api/x402-atlas.php',
  'http://127.0.0.1:8080/api/x402-atlas.php?x=1',
  'http://127.0.0.1:8080/api/x402-atlas.php#top',
  'http://127.0.0.1:8080/api/x402-atlas.php?x=1#top',
  'http://127.0.0.1:8080/api/x402-atlas.php#a?b',
  'http://127.0.0.1:8080//api//x402-atlas.php?asset=a//b',
  'http://127.0.0.1:8080/api/x402%2Datlas.php',
  'https://emi.example.org/',
  'https://emi.example.org',
  'http://[::1]:8080/arena/vote?round=1',
];

describe('routedPath', () => {
  it.each(URLS)('%s: the URL parser’s path, normalised', (url) => {
    expect(routedPath(new Request(url))).toBe(normalisePath(new URL(url).pathname));
  });
});
