// Standard output that cannot be written: every command ends as one line, never a stack trace or a silent exit 0.
// A writer that says the failure in its own words (`emi buy` keeps the payment it made) writes through
// writeOutput, which marks the error so that the shared rule stays silent about it.
import { oneLine } from './cli-options.ts';

// A registry symbol: the same wherever a bundle puts a copy of this module.
const SAID = Symbol.for('emi.output-fault-said');

const isSaid = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[SAID] === true;

/**
 * Writes `text` to `stream` and settles once it is written; rejects when it cannot be (ENOSPC, EPIPE...). The error
 * is marked before the stream emits it: its caller says it.
 */
export function writeOutput(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolveWrite, rejectWrite) => {
    stream.write(text, (error) => {
      if (!error) return resolveWrite();
      (error as unknown as Record<symbol, unknown>)[SAID] = true;
      rejectWrite(error);
    });
  });
}

/**
 * The output that cannot be written ends the command as one line: a full disk or a closed file is said on stderr and
 * exits 1 once the command is done (a run is never cut off mid-write); EPIPE, the reader gone (`| head -1`), is what
 * a pipe's reader asks for and stays quiet. Node emits a write's failure a tick later, so a command that writes its
 * last line and calls process.exit is checked again on the way out.
 */
export function guardOutput(stream: NodeJS.WriteStream): void {
  let said = false;
  const say = (error: NodeJS.ErrnoException): void => {
    if (said || isSaid(error)) return;
    said = true;
    if (error.code === 'EPIPE') return;
    console.error(`emi: cannot write the output: ${oneLine(error.message)}`);
    process.exitCode = 1;
  };
  stream.on('error', say);
  process.once('exit', () => {
    if (stream.errored) say(stream.errored);
  });
}
