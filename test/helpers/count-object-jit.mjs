// Preloaded (node --import) into a process a test runs: counts the parsers zod generates at run time for object
// schemas (its JIT: `new Function` called from zod's generateFastpass), and writes the count at exit to the file
// named by EMI_TEST_OBJECT_JIT_FILE. Parsers an explicit `z.compile` makes are not counted.
import { writeFileSync } from 'node:fs';

let generated = 0;
const NativeFunction = globalThis.Function;
globalThis.Function = new Proxy(NativeFunction, {
  construct(target, args, newTarget) {
    if (/\bgenerateFastpass\b/.test(new Error().stack ?? '')) generated += 1;
    return Reflect.construct(target, args, newTarget === globalThis.Function ? target : newTarget);
  },
});

process.on('exit', () => {
  const file = process.env.EMI_TEST_OBJECT_JIT_FILE;
  if (file) writeFileSync(file, String(generated));
});
