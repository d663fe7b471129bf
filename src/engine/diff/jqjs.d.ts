// Types for @michaelhomer/jqjs, which ships none.
declare module "@michaelhomer/jqjs" {
  type JqFilter = (input: unknown) => Iterable<unknown>;
  interface Jq {
    (program: string): JqFilter;
    compile(program: string): JqFilter;
    prettyPrint(value: unknown): string;
  }
  const jq: Jq;
  export default jq;
}
