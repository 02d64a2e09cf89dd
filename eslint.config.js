import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const ZOD_NAMESPACE = {
  selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
  message: "Import zod as `import * as z from 'zod'`.",
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      '.dist.generations/',
      'build/',
      'var/',
      'paid/',
      'deploy/netlify/functions/',
      '.cache/',
      '**/.wrangler/', // wrangler's own folder, wherever it runs (a killed wrangler dev leaves its tmp/ there)
      'site/api/',
      'site/arena/',
      'site/x402-buyer/app.js',
      'site/assets/arena-vote/',
      'site/assets/x402-buyer/',
      'artifacts/',
      'coverage/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // zod 4's documented form: a namespace import lets esbuild leave out what emi never uses (zod's 40 locales,
      // half of its code), where `import { z }` brings the whole namespace object into build/.
      'no-restricted-syntax': ['error', ZOD_NAMESPACE],
    },
  },
  {
    // The commands' own code (not the browser pages, not the tests).
    files: ['generator/**/*.ts', 'schemas/**/*.ts', 'paywall-worker/**/*.ts', 'mcp/**/*.ts', 'bin/**/*.js'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ZOD_NAMESPACE,
        {
          // The first locale-aware call loads ICU's formatting data, about 17 ms of a one-off command's start.
          selector:
            "CallExpression[callee.property.name=/^toLocale(String|DateString|TimeString)$/], NewExpression[callee.object.name='Intl']",
          message:
            'Format numbers and dates without ICU (see groupThousands in schemas/common.ts): its first call costs every command ~17 ms.',
        },
      ],
    },
  },
  {
    files: ['site/**/*.{js,ts}'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
