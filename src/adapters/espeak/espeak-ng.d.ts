declare module 'espeak-ng' {
  interface ESpeakModule {
    FS: {
      readFile(path: string): Uint8Array;
      unlink(path: string): void;
    };
  }
  interface ESpeakOptions {
    noInitialRun?: boolean;
    print?: (text: string) => void;
    printErr?: (text: string) => void;
    instantiateWasm?: (imports: object, done: (instance: unknown, module: unknown) => void) => object;
  }
  const factory: (options: ESpeakOptions) => Promise<ESpeakModule>;
  export default factory;
}
