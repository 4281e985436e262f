/** The invitation page (to be written). */
export function Invitation() {
  return (
    <main>
      <h1>Invitation</h1>
    </main>
  );
}
