// Where the worker reads the pre-generated paid files from. `file` is always a name from the fixed registry
// (PAID_RESOURCES[].file), never anything taken from a request.
export interface PaidFileStorage {
  /** The file's text, or null when it does not exist. */
  read(file: string): Promise<string | null>;
  /**
   * A cheap token that changes whenever the file changes (null when it does not exist), where the store has one:
   * the worker then re-reads and re-validates a file only when it changed. Stores without one are re-read every
   * second.
   */
  version?(file: string): Promise<string | null>;
  /**
   * The same token without waiting, where the store can read it synchronously (the local disk): used instead of
   * `version`, and an unpaid request whose file has not changed is then answered without any I/O wait (see
   * core/decide.ts).
   */
  versionNow?(file: string): string | null;
}
