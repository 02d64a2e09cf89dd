// Compiles build/ once before the suite: tests that spawn bin/emi.js must run the TypeScript as it is now, never a
// build left over from before an edit.
import { buildAll } from '../bin/build.js';

export default async function setup(): Promise<void> {
  await buildAll();
}
