/**
 * `await using` for Quest, QuestManager and VadWorker, stated so that the
 * emitted .d.ts compile under `lib: ["ES2022", "DOM"]` with
 * `skipLibCheck: false`.
 *
 * Why not `implements AsyncDisposable` with a `[Symbol.asyncDispose]()` method:
 * both names come from the esnext.disposable lib, and the .d.ts would then
 * fail in any app whose lib lacks it. Declaring them ourselves (a global
 * `SymbolConstructor.asyncDispose`) would clash with the lib's own declaration
 * in apps that do have it. Leaving them out would lose `await using` in those
 * apps. So the public type is conditional: where the app's lib declares
 * `Symbol.asyncDispose`, the class has that method and is an AsyncDisposable;
 * where it does not, the member is absent, and the app uses the named method
 * (`remove()`, `dispose()`, `stop()`) as it would anyway.
 *
 * The method is put on the prototype at class definition (a static block), so
 * it is not declared in the class body and not emitted in its .d.ts.
 */

/** `typeof Symbol.asyncDispose` where the program's lib declares it; `never` where it does not. */
export type AsyncDisposeSymbol = SymbolConstructor extends { readonly asyncDispose: infer S extends symbol } ? S : never;

/**
 * `AsyncDisposable` where the program's lib declares `Symbol.asyncDispose`;
 * `{}` where it does not. A class merges it in with an interface of its own name.
 */
export type AsyncDisposableIfSupported = { [K in AsyncDisposeSymbol]: () => Promise<void> };

/**
 * Installs `dispose` as `[Symbol.asyncDispose]` on `target`'s prototype. On a
 * runtime without the symbol, the key is `Symbol.for("Symbol.asyncDispose")`,
 * the one esbuild's and Babel's lowering of `await using` look up there.
 */
export function defineAsyncDispose<T>(target: { prototype: T }, dispose: (this: T) => Promise<void>): void {
  const key: symbol = (Symbol as { asyncDispose?: symbol }).asyncDispose ?? Symbol.for("Symbol.asyncDispose");
  Object.defineProperty(target.prototype, key, { value: dispose, writable: true, configurable: true });
}
