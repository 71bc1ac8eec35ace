// Records every CSP violation the page sees, so a test can assert there are none.
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});
