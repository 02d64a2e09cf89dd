// Preload (`node --import ./record-imports.mjs`) that appends every module URL the process loads to the file
// named by EMI_RECORD_IMPORTS, one per line: the lazy-loading test reads which packages a command pulled in.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      appendFileSync(process.env.EMI_RECORD_IMPORTS, result.url + '\\n');
      return result;
    }
  `)}`,
);
