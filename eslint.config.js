import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

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
      '.wrangler/',
      'site/api/',
      'site/arena/',
      'site/x402-buyer/app.js',
      'site/assets/arena-vote/',
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
    },
  },
  {
    files: ['site/**/*.{js,ts}'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
