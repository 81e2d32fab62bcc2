//! The token table of a kube token file (staging/src/k8s.io/apiserver/pkg/
//! authentication/token/tokenfile/tokenfile.go `NewCSV`): one record per
//! token, `token,user name,user uid[,"group1,group2,..."]`, further columns
//! ignored. A record with fewer than 3 columns makes the whole file invalid;
//! a record with an empty token is skipped; a later duplicate token wins.

use std::collections::HashMap;

use capstan_plugin_sdk::UserInfo;

use crate::csv;

/// Tokens and the users they stand for, plus the warnings kube would log.
#[derive(Debug, Default)]
pub struct TokenTable {
    users: HashMap<String, UserInfo>,
    pub warnings: Vec<String>,
}

impl TokenTable {
    /// Reads the CSV text of a token file.
    pub fn parse(text: &str) -> Result<Self, String> {
        let records = csv::records(text).map_err(|e| e.to_string())?;
        let mut table = TokenTable::default();
        for (index, record) in records.into_iter().enumerate() {
            table.add(index + 1, record)?;
        }
        Ok(table)
    }

    /// The user of `token`, if the file names it.
    pub fn user(&self, token: &str) -> Option<&UserInfo> {
        self.users.get(token)
    }

    fn add(&mut self, number: usize, mut record: Vec<String>) -> Result<(), String> {
        if record.len() < 3 {
            return Err(format!(
                "token file must have at least 3 columns (token, user name, user uid), found {}",
                record.len()
            ));
        }
        if record[0].is_empty() {
            self.warn("empty", number);
            return Ok(());
        }
        // kube: `strings.Split(record[3], ",")`, so an empty 4th column is one empty group.
        let groups = match record.get(3) {
            Some(groups) => groups.split(',').map(str::to_string).collect(),
            None => Vec::new(),
        };
        record.truncate(3);
        let [token, username, uid]: [String; 3] = record.try_into().unwrap_or_default();
        let user = UserInfo {
            username,
            uid,
            groups,
            ..Default::default()
        };
        if self.users.insert(token, user).is_some() {
            self.warn("duplicate", number);
        }
        Ok(())
    }

    fn warn(&mut self, what: &str, number: usize) {
        self.warnings.push(format!(
            "{what} token has been found in token file, record number '{number}'"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_users_with_and_without_groups() {
        let table =
            TokenTable::parse("t1,alice,1001,\"admins,devs\"\nt2,bob,1002\nt3,carol,,,ignored\n")
                .unwrap();
        let alice = table.user("t1").unwrap();
        assert_eq!(alice.username, "alice");
        assert_eq!(alice.uid, "1001");
        assert_eq!(alice.groups, ["admins", "devs"]);
        assert!(table.user("t2").unwrap().groups.is_empty());
        assert_eq!(table.user("t3").unwrap().groups, [""]);
        assert_eq!(table.user("t3").unwrap().uid, "");
        assert!(table.user("t4").is_none());
        assert!(table.warnings.is_empty());
    }

    #[test]
    fn skips_empty_tokens_and_keeps_the_last_duplicate() {
        let table = TokenTable::parse(",nobody,0\nt,first,1\nt,second,2\n").unwrap();
        assert_eq!(table.user("t").unwrap().username, "second");
        assert!(table.user("").is_none());
        assert_eq!(
            table.warnings,
            [
                "empty token has been found in token file, record number '1'",
                "duplicate token has been found in token file, record number '3'"
            ]
        );
    }

    #[test]
    fn short_records_and_bad_quotes_invalidate_the_file() {
        assert_eq!(
            TokenTable::parse("t,alice,1\nt2,bob\n").unwrap_err(),
            "token file must have at least 3 columns (token, user name, user uid), found 2"
        );
        assert!(TokenTable::parse("t,al\"ice,1")
            .unwrap_err()
            .contains("bare \""));
    }
}
