// Runs an `emi` command line in this process (as bin/emi.js would) and returns what it printed to stdout.
import { vi } from 'vitest';
import { createProgram } from '../../generator/cli.ts';

export async function emiInProcess(args: readonly string[]): Promise<string> {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    printed.push(`${parts.join(' ')}\n`);
  });
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    printed.push(String(chunk));
    return true;
  });
  try {
    await createProgram().parseAsync([...args], { from: 'user' });
  } finally {
    log.mockRestore();
    write.mockRestore();
  }
  return printed.join('');
}
