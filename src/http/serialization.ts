/**
 * Response serializers compiled on a route's first response, not at start. Fastify compiles a
 * fast-json-stringify function for every response schema of every route when the app becomes
 * ready: several hundred of them hold ≈ 30 MiB of generated code and strings in every process,
 * which a process serving a few routes never uses. Each one is now Fastify's own serializer
 * (same compiler, same options and shared schemas), built when the route first answers with that
 * status; that response pays its compilation once.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

export function lazySerializers(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}
