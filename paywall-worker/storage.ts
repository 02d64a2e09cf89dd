// Where the worker reads the pre-generated paid files from. `file` is always a name from the fixed registry
// (PAID_RESOURCES[].file), never anything taken from a request.
export interface PaidFileStorage {
  /** The file's text, or null when it does not exist. */
  read(file: string): Promise<string | null>;
}
