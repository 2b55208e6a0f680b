/* PLACEHOLDER: being written. */
