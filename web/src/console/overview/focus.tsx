/** Keeps the keyboard where the person was after a section reloads its list (the button they pressed is gone by then). */
import { useEffect, useRef } from "preact/hooks";

/**
 * Returns `focusLater(find)`: once `data` has changed (the reload arrived and is rendered), the element `find` returns
 * takes the focus. Used by the overview's sections after an action replaced the row that had the focus.
 */
export function useFocusAfter(data: unknown): (find: () => HTMLElement | null | undefined) => void {
  const wanted = useRef<(() => HTMLElement | null | undefined) | null>(null);
  useEffect(() => {
    const find = wanted.current;
    if (!find) return;
    wanted.current = null;
    find()?.focus();
  }, [data]);
  return (find) => {
    wanted.current = find;
  };
}
