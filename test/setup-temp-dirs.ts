// Run before every test file (vitest.config.ts setupFiles): its afterAll is the file's first and, hooks running as a
// stack, runs after all of the file's own, so the folders kept for the file outlive what its hooks still do in them
// (a tmpfs unmounted, a server stopped).
import { afterAll } from 'vitest';
import { removeFileTempDirs } from './helpers/temp-dir.ts';

afterAll(removeFileTempDirs);
