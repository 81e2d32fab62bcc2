//! What column definitions are made of (kube-apiserver's printers,
//! pkg/printers/internalversion/printers.go, 1.33): the Name and Age
//! columns, the wide (priority 1) Containers, Images and Selector columns,
//! and builders of the others. Each printer's columns are its group's
//! (`kinds/<group>/table.rs`), in kube's order, types and priorities;
//! priority 1 columns are the ones `kubectl get -o wide` adds.

use super::Column;

pub(crate) const NAME_DESC: &str =
    "Name must be unique within a namespace; used to identify the object.";
pub(crate) const AGE_DESC: &str = "Time since the object was created (metadata.creationTimestamp).";
pub(crate) const CONTAINERS_DESC: &str = "Names of each container in the template.";
pub(crate) const IMAGES_DESC: &str = "Images referenced by each container in the template.";
pub(crate) const SELECTOR_DESC: &str = "Label selector for the pods this object manages.";

pub(crate) const fn col(
    name: &'static str,
    type_: &'static str,
    desc: &'static str,
    p: i32,
) -> Column {
    Column {
        name,
        type_,
        format: "",
        description: desc,
        priority: p,
    }
}

pub(crate) const fn text(name: &'static str, desc: &'static str) -> Column {
    col(name, "string", desc, 0)
}

pub(crate) const fn int(name: &'static str, desc: &'static str) -> Column {
    col(name, "integer", desc, 0)
}

pub(crate) const fn wide(name: &'static str, desc: &'static str) -> Column {
    col(name, "string", desc, 1)
}

pub(crate) const NAME: Column = Column {
    name: "Name",
    type_: "string",
    format: "name",
    description: NAME_DESC,
    priority: 0,
};
pub(crate) const AGE: Column = text("Age", AGE_DESC);
pub(crate) const CONTAINERS: Column = wide("Containers", CONTAINERS_DESC);
pub(crate) const IMAGES: Column = wide("Images", IMAGES_DESC);
pub(crate) const SELECTOR: Column = wide("Selector", SELECTOR_DESC);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::batch::table::{cron_job_columns as cron_job, job_columns as job};
    use crate::kinds::core::table::{
        event_columns as event, pod_columns as pod, resource_quota_columns as resource_quota,
    };

    fn names(columns: Vec<Column>) -> Vec<&'static str> {
        columns.iter().map(|c| c.name).collect()
    }
    #[test]
    fn pod_columns_and_wide_priority() {
        let cols = pod();
        assert_eq!(
            names(pod())[..5],
            ["Name", "Ready", "Status", "Restarts", "Age"]
        );
        assert!(cols[..5].iter().all(|c| c.priority == 0));
        assert!(cols[5..].iter().all(|c| c.priority == 1));
        assert_eq!(cols[0].format, "name");
    }

    #[test]
    fn ordered_like_kube() {
        assert_eq!(
            names(job())[..5],
            ["Name", "Status", "Completions", "Duration", "Age"]
        );
        assert_eq!(names(resource_quota()), ["Name", "Age", "Request", "Limit"]);
        assert_eq!(
            names(event())[..4],
            ["Last Seen", "Type", "Reason", "Object"]
        );
        assert_eq!(
            names(cron_job())[..7],
            [
                "Name",
                "Schedule",
                "Timezone",
                "Suspend",
                "Active",
                "Last Schedule",
                "Age"
            ]
        );
    }
}
