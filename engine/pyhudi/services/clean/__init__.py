"""The cleaner, in pipeline order: trigger (when a clean is due, hoodie.clean.async), plan (which file slices each
policy deletes), run (schedule the plan, execute it, complete the clean instant), background (the writer's clean in
a thread beside the write)."""
