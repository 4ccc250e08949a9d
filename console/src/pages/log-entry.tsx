export function LogEntryPage({ id }: { id: string }) {
  return (
    <section>
      <h1>Log entry {id}</h1>
    </section>
  );
}
