// Entry point of dist/modals.js (modals.js): alert() as an in-page notice
// and <form method="dialog"> closing its dialog. snuggen build appends it to
// the Snug runtime of an app that uses either.
import { dialogSubmit, noticeAlert } from "./modals.js";

globalThis.alert = noticeAlert;
addEventListener("submit", dialogSubmit);
