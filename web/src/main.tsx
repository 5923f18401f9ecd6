import { render } from "preact";
import { App } from "./app";
import "./styles.css";
import { applyTheme, readTheme } from "./theme";

applyTheme(readTheme());
render(<App />, document.getElementById("app")!);
