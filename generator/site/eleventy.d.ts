// Eleventy 3 ships JavaScript without type declarations: the small part of its API this project uses.
declare module '@11ty/eleventy' {
  export interface EleventyPage {
    url: string | false;
    inputPath: string;
    outputPath: string | false;
    data: Record<string, unknown>;
  }

  export interface EleventyUserConfig {
    addGlobalData(name: string, data: unknown): void;
    addPassthroughCopy(fileOrDir: string | Record<string, string>, options?: Record<string, unknown>): void;
    addFilter(name: string, filter: (...args: never[]) => unknown): void;
    setUseGitIgnore(enabled: boolean): void;
    setQuietMode(quiet: boolean): void;
    ignores: Set<string>;
  }

  export interface EleventyOptions {
    quietMode?: boolean;
    configPath?: string | false;
    /** How JavaScript templates are loaded; 'auto' (the default) reads the working directory's package.json. */
    loader?: 'esm' | 'cjs' | 'auto';
    pathPrefix?: string;
    config?: (eleventyConfig: EleventyUserConfig) => void | Promise<void>;
  }

  export default class Eleventy {
    constructor(input?: string, output?: string, options?: EleventyOptions);
    init(): Promise<void>;
    write(): Promise<unknown>;
  }
}
