// The examples shown on /docs/pay-from-code/ are read from the very files the tests run, so the page never shows
// code that was not run.
import { readFileSync } from 'node:fs';

const example = (name) => readFileSync(new URL(`./examples/${name}`, import.meta.url), 'utf8');

export default {
  examples: {
    node: example('pay-from-code.mjs'),
    curl: example('see-the-402.sh'),
  },
};
